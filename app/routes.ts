import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx", { id: "home" }),
  route("landing", "routes/home.tsx", { id: "landing" }),
  route("logout", "routes/logout.tsx"),
  route("dev/mailbox", "routes/dev/mailbox.tsx"),
  route("dashboard", "routes/dashboard/dashboard.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
