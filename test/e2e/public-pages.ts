// Public pages every visitor can open, with the heading each must show. The
// route and accessibility checks in public.e2e.ts run over this list; add a
// page here when it becomes public.
export interface PublicPage {
  path: string;
  heading: string;
}

export const PUBLIC_PAGES: PublicPage[] = [
  { path: "/", heading: "Transform Spaces Instantly" },
  { path: "/landing", heading: "Transform Spaces Instantly" },
  { path: "/gallery", heading: "Transform Spaces Virtually" },
  { path: "/features", heading: "Why Choose Our Virtual Staging?" },
  { path: "/blog", heading: "Staging an Apartment: Physical, DIY or Virtual?" },
  { path: "/terms-of-service", heading: "Terms of Service" },
  { path: "/privacy-policy", heading: "Privacy Policy" },
  { path: "/refund-policy", heading: "Refund Policy" },
  { path: "/login", heading: "Welcome back" },
  { path: "/auth", heading: "Create your account" },
];
