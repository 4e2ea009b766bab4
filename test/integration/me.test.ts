import { env } from "cloudflare:workers";
import { users } from "@db/schema";
import { db, signedIn } from "@test/support/factories";
import { deliverOk, SubscriptionStory } from "@test/support/stripe";
import { workerFetch } from "@test/support/worker";
import { userObject } from "@workers/objects/user-object";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

describe("GET /api/me", { timeout: 30_000 }, () => {
  it("answers 401 JSON when signed out", async () => {
    const res = await workerFetch("/api/me");
    expect(res.status).toBe(401);
    expect(res.headers.get("Content-Type")).toContain("application/json");
    expect(await res.json()).toEqual({ ok: false, code: "unauthenticated", error: "Not signed in." });
  });

  it("returns the signed-in user's e-mail, plan and available credits", async () => {
    const user = await signedIn({ credits: 5 });
    const before = await workerFetch("/api/me", { headers: { Cookie: user.cookie } });
    expect(before.status).toBe(200);
    expect(before.headers.get("Cache-Control")).toBe("no-store");
    expect(await before.json()).toEqual({ email: user.email, name: expect.any(String), credits: 5, plan: null });

    const story = new SubscriptionStory(user.id, "popular", "month");
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
    const { created, invoicePaid, invoice } = story.checkout();
    await deliverOk(created);
    await deliverOk(invoicePaid);
    const after = await (await workerFetch("/api/me", { headers: { Cookie: user.cookie } })).json();
    expect(after).toEqual({
      email: user.email,
      name: expect.any(String),
      credits: 49,
      plan: {
        id: "popular",
        name: "Popular plan",
        credits: 44,
        interval: "month",
        priceCents: 8900,
        features: expect.arrayContaining(["Stage 4 properties"]),
        nextPaymentDate: new Date(invoice.lines.data.at(-1)!.period.end * 1000).toISOString(),
        endsAt: null,
      },
    });
  });
});

function nextMessage(ws: WebSocket): Promise<{ type: string; credits: number; plan: unknown }> {
  return new Promise((resolve) => {
    ws.addEventListener("message", (e) => resolve(JSON.parse(e.data as string)), { once: true });
  });
}

describe("GET /api/me/live", { timeout: 30_000 }, () => {
  const upgrade = { Upgrade: "websocket", Origin: "http://localhost" };

  it("refuses signed-out visitors, other sites and plain requests", async () => {
    expect((await workerFetch("/api/me/live", { headers: upgrade })).status).toBe(401);
    const user = await signedIn();
    const evil = await workerFetch("/api/me/live", {
      headers: { ...upgrade, Origin: "https://evil.example", Cookie: user.cookie },
    });
    expect(evil.status).toBe(403);
    expect(evil.webSocket).toBeNull();
    const plain = await workerFetch("/api/me/live", { headers: { Cookie: user.cookie } });
    expect(plain.status).toBe(426);
  });

  it("sends the balance on connect and again after every change, from any source", async () => {
    const user = await signedIn({ credits: 2 });
    const res = await workerFetch("/api/me/live", { headers: { ...upgrade, Cookie: user.cookie } });
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    const first = nextMessage(ws);
    ws.accept();
    expect(await first).toEqual({ type: "balance", credits: 2, plan: null });

    const afterReserve = nextMessage(ws);
    await userObject(env, user.id).reserve(user.id, `job-${user.id}`, 1, "staging");
    expect(await afterReserve).toMatchObject({ credits: 1 });

    const story = new SubscriptionStory(user.id, "small", "month");
    await db.update(users).set({ stripeCustomerId: story.customer }).where(eq(users.id, user.id));
    const afterPayment = nextMessage(ws);
    await deliverOk(story.checkout().invoicePaid);
    expect(await afterPayment).toEqual({ type: "balance", credits: 10, plan: { name: "Small plan", credits: 9 } });

    const refreshed = nextMessage(ws);
    ws.send("refresh");
    expect(await refreshed).toMatchObject({ credits: 10 });
    ws.close(1000, "done");
  });
});
