// Who may do what, as every page and the server decide it alike.

/** Someone who can start staging: a plan, or credits left. "Get Started" takes them to the dashboard. */
export function canStage(user: { hasPlan: boolean; credits: number }): boolean {
  return user.hasPlan || user.credits > 0;
}

/** The admin pages are for a verified admin only. */
export function isAdmin(user: { role: string; verified: boolean }): boolean {
  return user.role === "admin" && user.verified;
}
