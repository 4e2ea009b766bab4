import type { BrowserContext, Page } from "playwright-core";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { prorationAmount } from "../../emulators/stripe-proration.ts";
import {
  baseUrl,
  browserForFile,
  createUser,
  type FixtureUser,
  type OpenBrowser,
  openPhotoEditor,
  phoneContext,
  signedInContext,
} from "./browser.ts";
import { providerRequests, setProviderMode } from "./provider-emulator.ts";
import { ROOM_PHOTO, seedPhotos } from "./support/library-bytes.ts";

// Issue 47's "done when", in Chromium against the production build and its emulators: an owner creates a team, buys
// seats through the Stripe emulator's checkout, invites a team admin and two agents by e-mail (the mail emulator),
// who accept from the mailed link; one agent stages in a shared listing on a phone and the other sees the result; a
// team admin's limit of 2 refuses the agent's third job from the page, and a team key's limit of 2 its third API job,
// each with the limit's words and no provider call; the owner adds a seat and the webhook raises the seats, the
// invitation cap and the pool by what Stripe's proration (at the emulator's clock) charged. Then removal: the removed
// agent's next request to the listing is 404, a key made by a removed team admin still works, the agent's account
// deletion leaves the listing's photos and original pages up, and the broker's CSV lists every download and pack.

// Team plan (app/shared/catalog.ts, TEAM_PLAN): what a seat costs and what it adds to the pool.
const SEAT_CENTS = 59 * 100;
const CREDITS_PER_SEAT = 30;
const PASSWORD = "team e2e password 1";
const PHONE = { width: 390, height: 844 };
const limitMessage = (n: number) =>
  `You have used your limit of ${n} team ${n === 1 ? "credit" : "credits"} for this billing period. Ask a team admin to raise it.`;

const stripeOrigin = () => `http://127.0.0.1:${inject("ports").stripe}`;
const mailApi = (to: string) =>
  `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(to)}`;
const uniqueEmail = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}@example.test`;
const today = () => new Date().toISOString().slice(0, 10);

const b = browserForFile();
beforeAll(async () => {
  await setProviderMode({ mode: "ok", latencyMs: 0 });
});

interface Person {
  user: FixtureUser;
  name: string;
  ctx: BrowserContext;
  page: Awaited<ReturnType<OpenBrowser["newPage"]>>;
  cookie: Record<string, string>;
}

async function person(name: string, viewport?: typeof PHONE): Promise<Person> {
  const user = await createUser({ email: uniqueEmail(name.toLowerCase()), password: PASSWORD, name, credits: 0 });
  const ctx = await signedInContext(b, user, viewport ? phoneContext(viewport) : {});
  const page = await b.newPage(ctx);
  return { user, name, ctx, page, cookie: { Cookie: `sw_session=${user.sessionToken}`, Origin: baseUrl() } };
}

/** The team page's headline: "<pool> credits in the team's pool · <seats> seats · <free> free". */
async function headline(page: Page): Promise<{ pool: number; seats: number; free: number }> {
  const text = (await page.locator("h1 + p").textContent()) ?? "";
  const m = /(\d+) credits in the team's pool · (\d+) seats? · (\d+) free/.exec(text);
  if (!m) throw new Error(`team headline not understood: ${text}`);
  return { pool: Number(m[1]), seats: Number(m[2]), free: Number(m[3]) };
}

/** Reloads the team page until the webhook's seats show (the page shows only what Stripe's webhook applied). */
async function seatsShown(page: Page, seats: number) {
  await expect
    .poll(
      async () => {
        await page.reload();
        return (await headline(page)).seats;
      },
      { timeout: 30_000, interval: 500 },
    )
    .toBe(seats);
}

async function invite(owner: Page, email: string, role: "agent" | "team_admin") {
  await owner.getByLabel("E-mail address").fill(email);
  await owner.getByLabel("Role").selectOption(role);
  await owner.getByRole("button", { name: "Send invitation" }).click();
  await owner
    .getByRole("status")
    .filter({ hasText: email })
    .or(owner.getByText(`${email} (pending)`))
    .first()
    .waitFor();
}

/** The invitation's link from the mail emulator: a signed /teams/join/<token> address. */
async function invitationLink(to: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const mails = (await (await fetch(mailApi(to))).json()) as { subject: string; text?: string; html?: string }[];
    const mail = mails.find((m) => m.subject.startsWith("You're invited to join"));
    const link = mail && /https?:\/\/[^\s"'<>]+\/teams\/join\/[a-z0-9]+/.exec(`${mail.text ?? ""} ${mail.html ?? ""}`);
    if (link) return new URL(link[0]).pathname;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no invitation mailed to ${to}`);
}

async function accept(p: Person, teamId: string) {
  await p.page.goto(await invitationLink(p.user.email));
  await p.page.getByRole("button", { name: "Accept the invitation" }).click();
  await p.page.waitForURL(`${baseUrl()}/teams/${teamId}`);
}

/** An owner's team with paid seats, a team admin and two agents who accepted their mailed invitations. */
async function teamOfFour(seats: number) {
  const owner = await person("Olivia");
  const admin = await person("Adam");
  const agentA = await person("Alice", PHONE);
  const agentB = await person("Bruno");
  const teamName = `Harbor Realty ${owner.user.id.slice(0, 4)}`;
  await owner.page.goto("/teams");
  await owner.page.waitForSelector("html[data-hydrated=true]");
  await owner.page.getByLabel("Team name").fill(teamName);
  await owner.page.getByRole("button", { name: "Create team" }).click();
  await owner.page.getByRole("heading", { level: 1, name: teamName }).waitFor();
  const teamId = new URL(owner.page.url()).pathname.split("/").pop()!;
  expect(await headline(owner.page)).toEqual({ pool: 0, seats: 1, free: 0 });

  // Seats through the Stripe emulator's checkout; the page shows them once the webhook applied them.
  await owner.page.getByLabel(/^Seats/).fill(String(seats));
  await owner.page.getByRole("button", { name: "Buy seats" }).click();
  await owner.page.waitForURL(`${stripeOrigin()}/c/pay/**`);
  await owner.page.getByRole("button", { name: "Pay", exact: true }).click();
  await owner.page.waitForURL(`${baseUrl()}/teams/${teamId}?checkout=success`);
  await seatsShown(owner.page, seats);
  expect(await headline(owner.page)).toEqual({ pool: seats * CREDITS_PER_SEAT, seats, free: seats - 1 });

  await invite(owner.page, admin.user.email, "team_admin");
  await invite(owner.page, agentA.user.email, "agent");
  await invite(owner.page, agentB.user.email, "agent");
  for (const p of [admin, agentA, agentB]) await accept(p, teamId);
  await owner.page.reload();
  expect((await headline(owner.page)).free).toBe(seats - 4);
  return { teamId, owner, admin, agentA, agentB };
}

/** A shared listing made from the team page by `p`, and its folder id (from the library's folder link). */
async function sharedListing(p: Person, teamId: string, name: string): Promise<string> {
  await p.page.goto(`/teams/${teamId}`);
  await p.page.getByLabel("Listing name or address").fill(name);
  await p.page.getByRole("button", { name: "Create listing" }).click();
  await p.page.getByRole("status").filter({ hasText: name }).waitFor();
  await p.page.goto("/dashboard");
  const href = await p.page.locator(`a[href*="folder="]`, { hasText: name }).first().getAttribute("href");
  const folderId = /folder=([a-z0-9]+)/.exec(href ?? "")?.[1];
  if (!folderId) throw new Error(`no folder link for ${name}`);
  return folderId;
}

/** Uploads a room photo as `p` and moves it into the listing (the library's move, as its form sends it). */
async function photoInListing(p: Person, folderId: string, name: string): Promise<string> {
  const [photoId] = await seedPhotos({ baseUrl: baseUrl(), sessionToken: p.user.sessionToken! }, 1, name);
  const moved = await fetch(`${baseUrl()}/dashboard`, {
    method: "POST",
    headers: { ...p.cookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ intent: "move", photoId: photoId!, folderId }).toString(),
    redirect: "manual",
  });
  expect(moved.status).toBeLessThan(400);
  await moved.body?.cancel();
  return photoId!;
}

async function json(res: Response) {
  return (await res.json()) as Record<string, unknown> & { error?: string };
}

async function stageByApi(p: Person, photoId: string) {
  return fetch(`${baseUrl()}/api/photos/${photoId}/jobs`, {
    method: "POST",
    headers: { ...p.cookie, "Content-Type": "application/json" },
    body: JSON.stringify({ kind: "stage", roomType: "Bedroom", designStyle: "Modern" }),
  });
}

type VersionView = { id: string; createdBy: string; structure?: { verdict: string } | null };

async function versionsOf(p: Person, photoId: string): Promise<{ status: number; versions: VersionView[] }> {
  const res = await fetch(`${baseUrl()}/api/photos/${photoId}/versions`, { headers: p.cookie });
  if (res.status !== 200) {
    await res.body?.cancel();
    return { status: res.status, versions: [] };
  }
  return { status: 200, versions: ((await res.json()) as { versions: VersionView[] }).versions };
}

async function settled(p: Person, jobId: string) {
  await expect
    .poll(
      async () => {
        const res = await fetch(`${baseUrl()}/api/jobs/${jobId}`, { headers: p.cookie });
        return ((await json(res)).job as { status: string } | undefined)?.status;
      },
      { timeout: 60_000, interval: 500 },
    )
    .toMatch(/^(succeeded|failed)$/);
}

/** The team's invoice.paid events, newest last. */
async function teamInvoices(teamId: string) {
  type Line = { amount: number; period: { start: number; end: number } };
  type Invoice = {
    id: string;
    billing_reason: string;
    amount_paid: number;
    lines: { data: Line[] };
    parent: { subscription_details: { metadata: Record<string, string>; subscription: string } };
  };
  const events = (await (await fetch(`${stripeOrigin()}/_emulator/events?type=invoice.paid`)).json()) as {
    payload: { data: { object: Invoice } };
  }[];
  return events
    .map((e) => e.payload.data.object)
    .filter((i) => i.parent.subscription_details.metadata.teamId === teamId);
}

describe("a brokerage's team", () => {
  it("invites by e-mail, shares a listing staged from a phone, limits an agent and a team key, and adds a seat at Stripe's proration", async () => {
    const seats = 4;
    const { teamId, owner, admin, agentA, agentB } = await teamOfFour(seats);

    // Alice stages her photo in the shared listing from her phone; Bruno sees the result.
    const folderId = await sharedListing(agentA, teamId, "14 Harbor View");
    const photoId = await photoInListing(agentA, folderId, "Bedroom");
    const phone = agentA.page;
    const opened = await phone.goto(`/photos/${photoId}`);
    expect(opened?.status()).toBe(200);
    await phone.waitForSelector("html[data-hydrated=true]");
    if (!(await phone.getByTestId("photo-view").isVisible())) {
      await phone.screenshot({ path: "/tmp/teams-phone.png" });
      throw new Error(`no photo view: ${((await phone.locator("body").textContent()) ?? "").slice(0, 600)}`);
    }
    await openPhotoEditor(phone);
    const dialog = phone.getByTestId("quick-dialog");
    await dialog.getByLabel("Add furniture").check();
    await dialog.getByLabel("Room type").selectOption({ label: "Bedroom" });
    await dialog.getByLabel("Furniture style").selectOption({ label: "Modern" });
    await dialog.getByRole("button", { name: "Process Photo" }).click();
    await expect.poll(() => dialog.getByTestId("version-list").locator("li").count(), { timeout: 60_000 }).toBe(1);
    const seen = await versionsOf(agentB, photoId);
    expect(seen.status).toBe(200);
    expect(seen.versions.map((v) => v.createdBy)).toEqual([agentA.user.id]);
    expect((await agentB.page.goto(`/photos/${photoId}`))?.status()).toBe(200);
    await agentB.page.waitForSelector("html[data-hydrated=true]");
    await openPhotoEditor(agentB.page);
    await expect
      .poll(() => agentB.page.getByTestId("quick-dialog").getByTestId("version-list").locator("li").count())
      .toBe(1);
    await owner.page.reload();
    expect((await headline(owner.page)).pool).toBe(seats * CREDITS_PER_SEAT - 1);

    // The team admin limits Alice to 2 credits this period: her second job starts, her third is refused on the page
    // with the limit's words, and the provider is not called for it.
    await admin.page.goto(`/teams/${teamId}`);
    const aliceRow = admin.page.getByRole("listitem").filter({ hasText: agentA.user.email });
    await aliceRow.getByLabel(`Credit limit for ${agentA.user.email}`).fill("2");
    await aliceRow.getByRole("button", { name: "Set" }).click();
    await admin.page.getByRole("status").filter({ hasText: "Limit set to 2" }).waitFor();
    const second = await stageByApi(agentA, photoId);
    expect(second.status).toBe(202);
    await settled(agentA, ((await json(second)).job as { id: string }).id);
    const calls = (await providerRequests()).length;
    await phone.reload();
    await phone.waitForSelector("html[data-hydrated=true]");
    await openPhotoEditor(phone);
    await dialog.getByLabel("Add furniture").check();
    await dialog.getByLabel("Room type").selectOption({ label: "Bedroom" });
    await dialog.getByLabel("Furniture style").selectOption({ label: "Modern" });
    await dialog.getByRole("button", { name: "Process Photo" }).click();
    await expect
      .poll(() => dialog.getByTestId("job-error").textContent(), { timeout: 30_000 })
      .toContain(limitMessage(2));
    expect((await providerRequests()).length).toBe(calls);

    // A team key with a limit of 2, made by the team admin: its third job is refused the same way.
    await admin.page.goto(`/teams/${teamId}`);
    await admin.page.getByLabel("Key name").fill("Listing feed");
    await admin.page.getByLabel("Limit per period (optional)").fill("2");
    await admin.page.getByRole("button", { name: "Create key" }).click();
    const token = (await admin.page.getByTestId("team-key-token").textContent())?.trim() ?? "";
    expect(token).toMatch(/^sw_/);
    const key = { Authorization: `Bearer ${token}` };
    const form = new FormData();
    form.set("file", new Blob([ROOM_PHOTO], { type: "image/jpeg" }), "Kitchen.jpg");
    const up = await fetch(`${baseUrl()}/api/v1/photos`, { method: "POST", headers: key, body: form });
    expect(up.status).toBe(201);
    const keyPhoto = ((await json(up)).photo as { id: string }).id;
    const keyJob = () =>
      fetch(`${baseUrl()}/api/v1/photos/${keyPhoto}/jobs`, {
        method: "POST",
        headers: { ...key, "Content-Type": "application/json" },
        body: JSON.stringify({ kind: "stage", roomType: "Kitchen", designStyle: "Modern" }),
      });
    for (let i = 0; i < 2; i++) {
      const started = await keyJob();
      expect(started.status).toBe(202);
      const id = ((await json(started)).job as { id: string }).id;
      // Settled before the next, so the provider's log counts only what was asked.
      await expect
        .poll(
          async () =>
            ((await json(await fetch(`${baseUrl()}/api/v1/jobs/${id}`, { headers: key }))).job as { status: string })
              .status,
          { timeout: 60_000, interval: 500 },
        )
        .toMatch(/^(succeeded|failed)$/);
    }
    const beforeThird = (await providerRequests()).length;
    const third = await keyJob();
    expect(third.status).toBe(402);
    expect((await json(third)).error).toBe(limitMessage(2));
    await new Promise((r) => setTimeout(r, 1000));
    expect((await providerRequests()).length).toBe(beforeThird);

    // The owner adds a seat at a moment the emulator's clock is frozen at: Stripe prorates it to the second, the
    // webhook raises the seats, the invitation cap and the pool by what the proration paid for.
    await owner.page.reload();
    const before = await headline(owner.page);
    expect(before.seats).toBe(seats);
    expect(before.free).toBe(0);
    const clock = (await (await fetch(`${stripeOrigin()}/_emulator/clock`)).json()) as { now: number };
    const at = Math.ceil(clock.now) + 5;
    const frozen = await fetch(`${stripeOrigin()}/_emulator/clock`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ frozen_time: at }),
    });
    expect(frozen.status).toBe(200);
    try {
      await owner.page.getByLabel(/^Seats/).fill(String(seats + 1));
      await owner.page.getByRole("button", { name: "Change seats" }).click();
      await owner.page.getByRole("status").filter({ hasText: "Stripe is charging the change" }).waitFor();
      await seatsShown(owner.page, seats + 1);
    } finally {
      await fetch(`${stripeOrigin()}/_emulator/clock`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ frozen_time: null }),
      });
    }
    const invoices = await teamInvoices(teamId);
    const first = invoices.find((i) => i.billing_reason === "subscription_create");
    const change = invoices.find((i) => i.billing_reason === "subscription_update");
    expect(first && change).toBeTruthy();
    const periodLine = first!.lines.data[0]!;
    const period = { start: periodLine.period.start, end: periodLine.period.end };
    // Stripe's formula: the unused time on the old quantity credited, the remaining time on the new one charged,
    // each to the second over the period and rounded to the cent on its own.
    const expected =
      prorationAmount(SEAT_CENTS, seats + 1, period, at) - prorationAmount(SEAT_CENTS, seats, period, at);
    expect(change!.lines.data.map((l) => l.amount).sort((x, y) => x - y)).toEqual(
      [-prorationAmount(SEAT_CENTS, seats, period, at), prorationAmount(SEAT_CENTS, seats + 1, period, at)].sort(
        (x, y) => x - y,
      ),
    );
    expect(change!.amount_paid).toBe(expected);
    const after = await headline(owner.page);
    expect(after.seats).toBe(seats + 1);
    expect(after.free).toBe(1);
    expect(after.pool - before.pool).toBe(Math.floor((CREDITS_PER_SEAT * expected) / SEAT_CENTS));
    // The cap rose with the seat: one more invitation can be pending now.
    await invite(owner.page, uniqueEmail("fifth"), "agent");
    // The page's third job was refused 402 on purpose (the limit); nothing else may have failed.
    agentA.page.assertClean([/status of 402 \(Payment Required\)/]);
    for (const p of [owner, admin, agentB]) p.page.assertClean();
  }, 300_000);

  it("after removal the agent's next request is 404, a removed admin's key still works, the deleted agent's photos and pages stay, and the broker's CSV lists every download and pack", async () => {
    const { teamId, owner, admin, agentA, agentB } = await teamOfFour(4);
    await admin.page.goto(`/teams/${teamId}`);
    await admin.page.getByLabel("Key name").fill("Website");
    await admin.page.getByRole("button", { name: "Create key" }).click();
    const token = (await admin.page.getByTestId("team-key-token").textContent())?.trim() ?? "";
    const key = { Authorization: `Bearer ${token}` };
    const firstSecret = (await admin.page.getByTestId("team-key-callback-secret").textContent())?.trim();
    // Its callback secret replaced, shown once, and the old one stopped at once (ADR 0355).
    await admin.page.getByRole("button", { name: "Replace callback secret of Website" }).click();
    const shownSecret = async () => (await admin.page.getByTestId("team-key-callback-secret").textContent())?.trim();
    await expect.poll(shownSecret).not.toBe(firstSecret);
    expect(await shownSecret()).toMatch(/^whsec_[a-z2-7]{52}$/);
    expect(firstSecret).toMatch(/^whsec_[a-z2-7]{52}$/);
    await admin.page.getByRole("button", { name: "Stop the old secret now for Website" }).click();
    await expect
      .poll(() => admin.page.getByRole("status").first().textContent())
      .toBe('The old callback secret of "Website" no longer signs callbacks.');
    await expect.poll(() => admin.page.getByTestId("team-key-end-old-secret").count()).toBe(0);

    // Alice stages in the listing and downloads it for MLS (publishing its original page) and packs the listing;
    // Bruno does the same with her photo.
    const folderId = await sharedListing(agentA, teamId, "9 Pier Road");
    const photoId = await photoInListing(agentA, folderId, "Living room");
    const started = await stageByApi(agentA, photoId);
    expect(started.status).toBe(202);
    await settled(agentA, ((await json(started)).job as { id: string }).id);
    const [version] = (await versionsOf(agentA, photoId)).versions;
    expect(version).toBeDefined();
    const base = `${baseUrl()}/api/photos/${photoId}/versions/${version!.id}`;
    if (version!.structure?.verdict === "flagged") {
      const confirmed = await fetch(`${base}/confirm-structure`, { method: "POST", headers: agentA.cookie });
      expect(confirmed.status).toBe(200);
    }
    const exported: { who: Person; what: string }[] = [];
    for (const p of [agentA, agentB]) {
      const mls = await fetch(`${base}/labelled`, {
        method: "POST",
        headers: { ...p.cookie, "Content-Type": "application/x-www-form-urlencoded" },
        body: "publish=first",
      });
      expect([p.name, mls.status]).toEqual([p.name, 200]);
      await mls.arrayBuffer();
      exported.push({ who: p, what: "MLS download" });
      const pack = await fetch(`${baseUrl()}/api/folders/${folderId}/pack`, { headers: p.cookie });
      expect([p.name, pack.status]).toEqual([p.name, 200]);
      await pack.arrayBuffer();
      exported.push({ who: p, what: "listing pack" });
    }
    const disclosure = (await json(await fetch(`${base}/disclosure`, { headers: agentB.cookie }))).disclosure as {
      page: { url: string | null };
      profile: { id: string };
    };
    expect(disclosure.page.url).toMatch(/\/o\/[a-z0-9]+$/);
    const pageUrl = disclosure.page.url!;

    const csv = async () => {
      const res = await fetch(`${baseUrl()}/teams/${teamId}/record.csv?from=${today()}&to=${today()}`, {
        headers: owner.cookie,
      });
      expect(res.status).toBe(200);
      return res.text();
    };
    const record = await csv();
    const lines = record.trimEnd().split("\r\n").slice(1);
    for (const { who, what } of exported) {
      const rows = lines.filter((l) => l.includes(`,${what},${who.name},${who.user.id},`));
      expect([who.name, what, rows.length > 0]).toEqual([who.name, what, true]);
      for (const row of rows) expect(row).toContain(`,${disclosure.profile.id},`);
    }
    expect(lines.filter((l) => l.includes(",MLS download,") && l.includes("Virtually staged"))).toHaveLength(2);

    // The team admin removes Alice: her next request to the team's listing is 404, her own library still answers.
    await admin.page.goto(`/teams/${teamId}`);
    await admin.page
      .getByRole("listitem")
      .filter({ hasText: agentA.user.email })
      .getByRole("button", { name: "Remove" })
      .click();
    await admin.page.getByRole("status").filter({ hasText: "Member removed" }).waitFor();
    expect((await versionsOf(agentA, photoId)).status).toBe(404);
    const listingPage = await fetch(`${baseUrl()}/dashboard?folder=${folderId}`, { headers: agentA.cookie });
    expect(listingPage.status).toBe(404);
    await listingPage.body?.cancel();
    const own = await fetch(`${baseUrl()}/dashboard`, { headers: agentA.cookie });
    expect(own.status).toBe(200);
    await own.body?.cancel();

    // The owner removes the team admin who made the key: the key still works, on the pool.
    await owner.page.goto(`/teams/${teamId}`);
    await owner.page
      .getByRole("listitem")
      .filter({ hasText: admin.user.email })
      .getByRole("button", { name: "Remove" })
      .click();
    await owner.page.getByRole("status").filter({ hasText: "Member removed" }).waitFor();
    const form = new FormData();
    form.set("file", new Blob([ROOM_PHOTO], { type: "image/jpeg" }), "Porch.jpg");
    const up = await fetch(`${baseUrl()}/api/v1/photos`, { method: "POST", headers: key, body: form });
    expect(up.status).toBe(201);
    const keyPhoto = ((await json(up)).photo as { id: string }).id;
    const keyJob = await fetch(`${baseUrl()}/api/v1/photos/${keyPhoto}/jobs`, {
      method: "POST",
      headers: { ...key, "Content-Type": "application/json" },
      body: JSON.stringify({ kind: "stage", roomType: "Living Room", designStyle: "Modern" }),
    });
    expect(keyJob.status).toBe(202);
    await keyJob.body?.cancel();

    // Alice deletes her account: the listing's photo, its versions and its original page stay up for the team.
    const deleted = await fetch(`${baseUrl()}/api/account/delete`, {
      method: "POST",
      headers: { ...agentA.cookie, "Content-Type": "application/json" },
      body: JSON.stringify({ password: PASSWORD }),
    });
    expect(deleted.status).toBe(200);
    await deleted.body?.cancel();
    await expect.poll(async () => (await versionsOf(agentB, photoId)).versions.length, { timeout: 30_000 }).toBe(1);
    // Give the account's purge time to run, then read again: nothing of the team's went with it.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await versionsOf(agentB, photoId)).versions.map((v) => v.id)).toEqual([version!.id]);
    const original = await fetch(pageUrl);
    expect(original.status).toBe(200);
    await original.body?.cancel();
    for (const which of ["original", "staged"]) {
      const image = await fetch(`${baseUrl()}/api/o/${pageUrl.split("/o/")[1]}/${which}`);
      expect([which, image.status]).toEqual([which, 200]);
      await image.arrayBuffer();
    }
    const photoImage = await fetch(`${base}/image`, { headers: agentB.cookie });
    expect(photoImage.status).toBe(200);
    await photoImage.arrayBuffer();

    // The broker's CSV still lists every download and pack, with the member as they were named then.
    expect(await csv()).toBe(record);
    for (const p of [owner, admin, agentB]) p.page.assertClean();
  }, 300_000);
});
