import { expect } from "vitest";
import { baseUrl } from "./browser.ts";

/**
 * Judges the user's stagings by limits that refuse any score over 1, through the dev tools (production's limits
 * refuse nothing: docs/decisions/0215-flag-when-unsure.md), so a test can run a refusal with the provider's "drift".
 */
export async function refuseOverOne(userId: string): Promise<void> {
  const res = await fetch(`${baseUrl()}/api/dev/users/${userId}/structure-limits`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ limits: { stage: { mark: 1, refuse: 1 } } }),
  });
  expect(res.status).toBe(200);
}
