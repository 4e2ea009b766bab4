import { describe, expect, it } from "vitest";
import { baseUrl } from "./browser.ts";

// The contact form's rate limit answers like every other 429: with
// Retry-After (issue 13). The action sets it; the page's response keeps it
// only because the route passes its action's headers on.

function send(email: string, message: string, path = "/gallery?contact=1"): Promise<Response> {
  return fetch(`${baseUrl()}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: new URL(baseUrl()).origin },
    body: new URLSearchParams({ name: "Robin", email, message }),
    redirect: "manual",
  });
}

describe("the contact form's rate limit", () => {
  it("answers 429 with Retry-After once an address has sent its share, as a page and as data", async () => {
    const email = `contact-${crypto.randomUUID().slice(0, 8)}@example.test`;
    // Up to the limit (CONTACT_RULE in workers/services/contact.ts) the messages go out; then the page says no.
    let page: Response | null = null;
    for (let i = 0; i < 20 && !page; i++) {
      const res = await send(email, `Question number ${i + 1} about staging.`);
      if (res.status === 429) page = res;
      else {
        expect(res.status, `message ${i + 1}`).toBe(200);
        await res.body?.cancel();
      }
    }
    expect(page?.status).toBe(429);
    expect(Number(page!.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(await page!.text()).toContain("Too many attempts");

    const data = await send(email, "And another question.", "/gallery.data?contact=1");
    expect(data.status).toBe(429);
    expect(Number(data.headers.get("Retry-After"))).toBeGreaterThan(0);
  });
});
