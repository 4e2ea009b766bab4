// Shared by the seed (in the Worker) and the start script (in Node).
export const DEMO_PASSWORD = "staging-demo-1";
export const DEMO_USERS = [
  { email: "demo@example.com", name: "Demo Agent", role: "user", credits: 20 },
  { email: "admin@example.com", name: "Admin", role: "admin", credits: 0 },
] as const;
