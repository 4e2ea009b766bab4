import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx", { id: "home" }),
  route("landing", "routes/home.tsx", { id: "landing" }),
  route("logout", "routes/logout.tsx"),
  route("dev/mailbox", "routes/dev/mailbox.tsx"),
  route("plans", "routes/billing/plans.tsx"),
  route("checkout", "routes/billing/checkout.tsx"),
  route("billing", "routes/billing/billing.tsx"),
  route("dashboard", "routes/dashboard.tsx"),
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
