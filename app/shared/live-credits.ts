/** The balance and plan the plan status card shows, pushed live to open pages. */
export interface LiveCredits {
  credits: number;
  plan: { name: string; credits: number } | null;
}
