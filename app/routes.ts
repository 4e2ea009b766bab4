import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx", { id: "home" }),
  route("landing", "routes/home.tsx", { id: "landing" }),
  route("logout", "routes/logout.tsx"),
  route("admin", "routes/admin/users.tsx"),
  route("admin/users/:id", "routes/admin/user.tsx"),
  route("dev/mailbox", "routes/dev/mailbox.tsx"),
  route("auth", "routes/auth/auth.tsx"),
  route("login", "routes/auth/login.tsx"),
  route("auth/google", "routes/auth/google.tsx"),
  route("auth/google/callback", "routes/auth/google-callback.tsx"),
  route("verify-email", "routes/auth/verify-email.tsx"),
  route("reset-password", "routes/auth/reset-password.tsx"),
  route("gallery", "routes/public/gallery.tsx"),
  route("features", "routes/public/features.tsx"),
  route("blog", "routes/public/blog.tsx"),
  route("terms-of-service", "routes/public/terms-of-service.tsx"),
  route("privacy-policy", "routes/public/privacy-policy.tsx"),
  route("refund-policy", "routes/public/refund-policy.tsx"),
  route("dashboard", "routes/dashboard/dashboard.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
