import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx", { id: "home" }),
  route("landing", "routes/home.tsx", { id: "landing" }),
  route("logout", "routes/logout.tsx"),
  route("admin", "routes/admin/users.tsx"),
  route("admin/users/:id", "routes/admin/user.tsx"),
  route("dev/mailbox", "routes/dev/mailbox.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
