import { describe, expect, it } from "vitest";
import { baseUrl, browserForFile, createUser, signedInContext } from "./browser.ts";
import { setProviderMode } from "./provider-emulator.ts";
import { seedPhotos } from "./support/library-bytes.ts";

// The largest batch the product offers, staged end to end (issue 45, hole 3; docs/decisions/0205): 100 photos
// picked on /batches/new in Chromium against the production build, every one staged by the provider emulator (at
// its fastest) and checked, then a keyed retry of the settled batch. A batch of 100 used to answer 500: its reads
// bound 101 parameters, over D1's 100 a statement.

const b = browserForFile();

describe("the largest batch", () => {
  it("100 photos from the form: 100 credits reserved at once, all 100 staged, a keyed retry finds nothing failed", async () => {
    await setProviderMode({ mode: "ok", latencyMs: 0 });
    // The plan with the most provider calls at once (8), so 100 jobs take as little time as they can.
    const user = await createUser({ credits: 100, plan: "Professional plan" });
    const session = { Cookie: `sw_session=${user.sessionToken}`, Origin: baseUrl() };
    const ids = await seedPhotos({ baseUrl: baseUrl(), sessionToken: user.sessionToken! }, 100, "Bedroom");
    expect(ids).toHaveLength(100);

    const page = await b.newPage(await signedInContext(b, user));
    await page.goto("/batches/new");
    await page.waitForSelector("html[data-hydrated=true]");
    // Every photo of the library is offered and picked; the room type comes from each name ("Bedroom 7").
    expect(await page.getByTestId("batch-candidates").locator("li").count()).toBe(100);
    await page.getByLabel("Design style for every photo").selectOption({ label: "Modern" });
    expect(await page.getByTestId("batch-total").textContent()).toContain("100 photos · 100 credits");
    await page.getByTestId("batch-start").click();
    await page.waitForURL(/\/batches\/[a-z2-7]{32}$/, { timeout: 30_000 });
    const batchId = /\/batches\/([a-z2-7]{32})$/.exec(page.url())?.[1] ?? "";
    const credits = async () =>
      ((await (await fetch(`${baseUrl()}/api/me`, { headers: session })).json()) as { credits: number }).credits;
    // All 100 reserved when the batch was answered.
    expect(await credits()).toBe(0);
    await page.close();

    // Followed through the API (the page reloads itself every few seconds; a poll here is lighter).
    let view: { open: boolean; counts: Record<string, number>; items: { status: string }[] } | undefined;
    for (let i = 0; i < 600; i++) {
      const res = await fetch(`${baseUrl()}/api/batches/${batchId}`, { headers: session });
      expect(res.status).toBe(200);
      view = ((await res.json()) as { batch: NonNullable<typeof view> }).batch;
      if (!view.open) break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect(view?.items).toHaveLength(100);
    expect(view?.counts).toEqual({ queued: 0, processing: 0, done: 100, failed: 0 });
    expect(await credits()).toBe(0);

    // A keyed retry reads the 100 job ids its key names (and the user's id): "nothing failed", not a 500.
    const retry = await fetch(`${baseUrl()}/api/batches/${batchId}/retry`, {
      method: "POST",
      headers: { ...session, "Idempotency-Key": `retry-${batchId}` },
    });
    expect(retry.status).toBe(409);
    expect(((await retry.json()) as { error: string }).error).toBe("Nothing in this batch has failed.");
  }, 600_000);
});
