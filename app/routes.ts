import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx", { id: "home" }),
  route("landing", "routes/home.tsx", { id: "landing" }),
  route("logout", "routes/logout.tsx"),
  route("dev/mailbox", "routes/dev/mailbox.tsx"),
  route("gallery", "routes/public/gallery.tsx"),
  route("features", "routes/public/features.tsx"),
  route("blog", "routes/public/blog.tsx"),
  route("terms-of-service", "routes/public/terms-of-service.tsx"),
  route("privacy-policy", "routes/public/privacy-policy.tsx"),
  route("refund-policy", "routes/public/refund-policy.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
