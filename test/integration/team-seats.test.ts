import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { stripeEvents, teamLedger, teamMembers, teamNotices, teamPaymentReversals, teams } from "@db/schema";
import {
  chargeObject,
  disputeObject,
  eventObject,
  type InvoiceObject,
  invoiceObject,
  priceObject,
  subscriptionObject,
  withPayment,
} from "@emulators/stripe-objects";
import { quantityProrations } from "@emulators/stripe-proration";
import { db, signedIn } from "@test/support/factories";
import { deliver, deliverOk } from "@test/support/stripe";
import { addMember, makeTeam } from "@test/support/teams";
import { createStripe } from "@workers/adapters/stripe";
import { checkFields } from "@workers/http/body";
import { STATUS } from "@workers/http/result";
import { randomToken } from "@workers/lib/crypto";
import { teamObject, userObject } from "@workers/objects/client";
import { settle } from "@workers/objects/team/pool";
import { stateDigest } from "@workers/services/fixtures";
import { creditsForProration } from "@workers/services/seat-events";
import { SEATS_RANGE_MESSAGE } from "@workers/services/team-billing";
import { runTeamAction, teamActionInput } from "@workers/services/teams/actions";
import { NO_FREE_SEAT } from "@workers/services/teams/invitations";
import { TEAM_ADMIN_ONLY, TEAM_OWNER_ONLY } from "@workers/services/teams/teams";
import { and, eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TEAM_PLAN } from "~/shared/catalog";
import { TEAM_POOL_FROZEN } from "~/shared/teams";

// A team's seats wired end to end (issue 47 item 3; docs/decisions/0291-seat-facts-applied-by-the-team-object.md):
// Stripe's signed events, built by the emulator's own builders, posted to the real webhook route, applied by the
// team's Durable Object in one batch (seats, freeze, the pool's grant under `seats:`/`period:<invoiceId>`, the
// members' notices), once per event and per invoice; the invitation cap follows the seats; only the owner changes
// them. test/support/setup.ts checks after each test that every pool equals its ledger's sum.

const seatPrice = priceObject({
  id: `price_${TEAM_PLAN.lookupKey}`,
  lookupKey: TEAM_PLAN.lookupKey,
  unitAmount: TEAM_PLAN.pricePerSeat * 100,
  interval: "month",
  productId: "prod_team",
});
const DAY = 86_400;

/** One team's subscription at Stripe, as its events tell it. Times in Stripe's seconds. */
class TeamStory {
  readonly customer = `cus_${randomToken(10)}`;
  readonly subscription = `sub_${randomToken(10)}`;
  readonly item = `si_${randomToken(10)}`;
  readonly start = Math.floor(Date.now() / 1000) - 10 * DAY;
  readonly end = this.start + 30 * DAY;
  constructor(readonly teamId: string) {}

  private invoice(spec: Partial<Parameters<typeof invoiceObject>[0]> & { id: string; created: number }) {
    return invoiceObject({
      number: "T-1",
      customer: this.customer,
      subscriptionId: this.subscription,
      subscriptionItemId: this.item,
      metadata: { teamId: this.teamId, planId: TEAM_PLAN.id },
      price: seatPrice,
      periodStart: this.start,
      periodEnd: this.end,
      billingReason: "subscription_create",
      paymentIntent: `pi_${spec.id}`,
      ...spec,
    });
  }

  event(type: "invoice.paid" | "invoice.payment_failed", inv: InvoiceObject, created = inv.created) {
    return eventObject(`evt_${randomToken(12)}`, type, inv, created);
  }

  /** The first period paid for `seats` seats (the checkout's invoice). */
  periodPaid(seats: number) {
    const inv = this.invoice({ id: `in_${randomToken(10)}`, created: this.start, quantity: seats });
    return this.event("invoice.paid", inv);
  }

  /** invoice_payment.paid for an invoice.paid event's invoice (its PaymentIntent is `pi_<invoice id>`). */
  paidBy(paid: ReturnType<typeof eventObject>) {
    const inv = paid.data.object as { id: string; amount_paid: number; created: number };
    const payment = {
      id: `inpay_${inv.id.slice(3)}`,
      object: "invoice_payment",
      amount_paid: inv.amount_paid,
      amount_requested: inv.amount_paid,
      created: inv.created,
      currency: "usd",
      invoice: inv.id,
      is_default: true,
      livemode: false,
      payment: { type: "payment_intent", payment_intent: `pi_${inv.id}` },
      status: "paid",
      status_transitions: { canceled_at: null, paid_at: inv.created },
    };
    return eventObject(`evt_${randomToken(12)}`, "invoice_payment.paid", payment, inv.created);
  }

  /** charge.refunded for the payment of an invoice.paid event's invoice, `refunded` cents so far (cumulative). */
  refund(paid: ReturnType<typeof eventObject>, refunded: number) {
    const inv = paid.data.object as { id: string; amount_paid: number; created: number };
    const charge = chargeObject({
      id: `ch_${inv.id}`,
      customer: this.customer,
      paymentIntent: `pi_${inv.id}`,
      amount: inv.amount_paid,
      amountRefunded: refunded,
      created: inv.created,
    });
    return eventObject(`evt_${randomToken(12)}`, "charge.refunded", charge, Math.floor(Date.now() / 1000));
  }

  /** charge.dispute.created, or closed with `status`, for the payment of an invoice.paid event's invoice. */
  dispute(paid: ReturnType<typeof eventObject>, status?: "won" | "lost") {
    const inv = paid.data.object as { id: string; amount_paid: number };
    const dispute = disputeObject({
      id: `dp_${inv.id}`,
      charge: `ch_${inv.id}`,
      paymentIntent: `pi_${inv.id}`,
      amount: inv.amount_paid,
      status: status ?? "needs_response",
      created: Math.floor(Date.now() / 1000),
    });
    const type = status ? "charge.dispute.closed" : "charge.dispute.created";
    return eventObject(`evt_${randomToken(12)}`, type, dispute, Math.floor(Date.now() / 1000));
  }

  /** An always_invoice seat change from `from` to `to`, paid now: Stripe's two proration lines. */
  seatsChanged(from: number, to: number) {
    const at = Math.floor(Date.now() / 1000);
    const id = `in_${randomToken(10)}`;
    let n = 0;
    const prorations = quantityProrations({
      price: seatPrice,
      from,
      to,
      period: { start: this.start, end: this.end },
      at,
      invoiceItem: () => `ii_${id}_${n++}`,
    });
    const inv = this.invoice({ id, created: at, billingReason: "subscription_update", prorations, periodLine: false });
    return { event: this.event("invoice.paid", inv), paid: inv.amount_paid };
  }

  /** A renewal declined (`attempt` of Stripe's tries), left open; then `paid` is the same invoice paid on a retry. */
  renewalDeclined(seats: number) {
    const id = `in_${randomToken(10)}`;
    const created = this.end;
    const inv = this.invoice({
      id,
      created,
      quantity: seats,
      billingReason: "subscription_cycle",
      periodStart: this.end,
      periodEnd: this.end + 30 * DAY,
      payment: { paid: false, attemptCount: 1, nextPaymentAttempt: created + 3 * DAY },
    });
    const again = withPayment(inv, { paid: false, attemptCount: 2, nextPaymentAttempt: created + 6 * DAY }, null);
    const paid = withPayment(inv, { paid: true, at: created + 6 * DAY, attemptCount: 3 }, `pi_${id}`);
    return {
      declined: this.event("invoice.payment_failed", inv, created),
      declinedAgain: this.event("invoice.payment_failed", again, created + 3 * DAY),
      paid: this.event("invoice.paid", paid, created + 6 * DAY),
      credits: seats * TEAM_PLAN.creditsPerSeat,
    };
  }
}

const teamRow = async (teamId: string) => (await db.select().from(teams).where(eq(teams.id, teamId)).get())!;
const grants = (teamId: string) =>
  db
    .select()
    .from(teamLedger)
    .where(and(eq(teamLedger.teamId, teamId), eq(teamLedger.kind, "grant")))
    .all();

/** A team whose subscription's first period (for `seats` seats) the webhook has applied. */
async function subscribedTeam(seats: number) {
  const owner = await signedIn();
  const teamId = await makeTeam(owner.id, { seats: 1 });
  const story = new TeamStory(teamId);
  expect(await deliverOk(story.periodPaid(seats))).toEqual({ received: true, outcome: "applied", duplicate: false });
  return { owner, teamId, story };
}

/** A team whose one seat's period the webhook has applied, its payment known (invoice_payment.paid). */
async function paidOneSeat() {
  const owner = await signedIn();
  const teamId = await makeTeam(owner.id, { seats: 1 });
  const story = new TeamStory(teamId);
  const paid = story.periodPaid(1);
  for (const e of [paid, story.paidBy(paid)]) await deliverOk(e);
  return { owner, teamId, story, paid, granted: TEAM_PLAN.creditsPerSeat, team: teamObject(env, teamId) };
}

/** The e-mails sent through the mail API while the test runs (there is no mail server in workerd). */
function recordMail() {
  const sent: { to: string[]; subject: string; text: string }[] = [];
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input, init);
    if (!req.url.startsWith(`${env.MAIL_API_URL}/`)) return realFetch(input, init);
    sent.push(await req.json());
    return Response.json({ id: `m${sent.length}` });
  });
  return sent;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a team's seats through the webhook", { timeout: 60_000 }, () => {
  it("a paid period sets the seats and grants them; a paid proration raises the seats and grants what it paid for", async () => {
    const { teamId, story } = await subscribedTeam(3);
    let team = await teamRow(teamId);
    expect(team).toMatchObject({
      seats: 3,
      credits: 3 * TEAM_PLAN.creditsPerSeat,
      stripeCustomerId: story.customer,
      stripeSubscriptionId: story.subscription,
    });

    const { event, paid } = story.seatsChanged(3, 4);
    const credits = creditsForProration(paid);
    // A third of the period is gone: the fourth seat pays about two thirds of a seat, and buys that share of credits.
    expect(paid).toBeGreaterThan(0);
    expect(paid).toBeLessThan(TEAM_PLAN.pricePerSeat * 100);
    expect(credits).toBeGreaterThan(0);
    expect(await deliverOk(event)).toEqual({ received: true, outcome: "applied", duplicate: false });
    team = await teamRow(teamId);
    expect(team.seats).toBe(4);
    expect(team.credits).toBe(3 * TEAM_PLAN.creditsPerSeat + credits);
    const invoiceId = (event.data.object as { id: string }).id;
    expect((await grants(teamId)).map((g) => [g.idempotencyKey, g.amount])).toEqual([
      [expect.stringMatching(/^period:in_/), 3 * TEAM_PLAN.creditsPerSeat],
      [`seats:${invoiceId}`, credits],
    ]);
    const record = await db.select().from(stripeEvents).where(eq(stripeEvents.id, event.id)).get();
    expect(record).toMatchObject({ outcome: "applied", userId: null });
  });

  it("a refunded seat payment takes its share back from the pool, once per refund; a person's credits are not touched", async () => {
    const owner = await signedIn({ credits: 4 });
    const teamId = await makeTeam(owner.id, { seats: 1 });
    const story = new TeamStory(teamId);
    const paid = story.periodPaid(2);
    const granted = 2 * TEAM_PLAN.creditsPerSeat;
    for (const e of [paid, story.paidBy(paid)]) expect((await deliverOk(e)).outcome).toBe("applied");
    expect((await teamRow(teamId)).credits).toBe(granted);
    const amount = (paid.data.object as { amount_paid: number }).amount_paid;
    // Half refunded, delivered twice: half the grant goes, once.
    const half = story.refund(paid, amount / 2);
    expect(await deliverOk(half)).toEqual({ received: true, outcome: "applied", duplicate: false });
    expect(await deliverOk(half)).toEqual({ received: true, outcome: "applied", duplicate: true });
    expect((await teamRow(teamId)).credits).toBe(granted / 2);
    // The rest refunded (Stripe's amount_refunded is cumulative): the pool is empty.
    await deliverOk(story.refund(paid, amount));
    expect((await teamRow(teamId)).credits).toBe(0);
    const rows = await db.select().from(teamPaymentReversals).where(eq(teamPaymentReversals.teamId, teamId)).all();
    expect(rows.map((r) => [r.cause, r.granted, r.due, r.taken]).sort()).toEqual([
      ["refund", granted, granted / 2, granted / 2],
      ["refund", granted, granted / 2, granted / 2],
    ]);
    expect(await userObject(env, owner.id).balance(owner.id)).toBe(4);
  });

  it("a disputed seat payment takes what the pool still holds; won, it gives that back once; lost, nothing more", async () => {
    const { teamId, story } = await subscribedTeam(3);
    const paid = story.periodPaid(3);
    // The first period's event was delivered by subscribedTeam; this one pays the same seats again (another invoice).
    for (const e of [paid, story.paidBy(paid)]) await deliverOk(e);
    const pool = (await teamRow(teamId)).credits;
    expect(pool).toBe(6 * TEAM_PLAN.creditsPerSeat);
    await deliverOk(story.dispute(paid));
    expect((await teamRow(teamId)).credits).toBe(pool - 3 * TEAM_PLAN.creditsPerSeat);
    const won = story.dispute(paid, "won");
    await deliverOk(won);
    await deliverOk({ ...won, id: `evt_${randomToken(12)}` });
    expect((await teamRow(teamId)).credits).toBe(pool);
    // A payment nobody recorded, as a team's or a person's: refused for Stripe to send again (ADR 0345), nothing moves.
    const stranger = story.refund(story.periodPaid(1), 100);
    expect((await deliver(stranger)).status).toBe(409);
    expect((await teamRow(teamId)).credits).toBe(pool);
  });

  it("credits out in jobs at a seat refund are held back when those jobs fail; a job reserved after it is not", async () => {
    const { owner, teamId, story, paid, granted, team } = await paidOneSeat();
    const jobs = (names: string[]) =>
      names.map((jobId) => ({ jobId: `${teamId}-${jobId}`, amount: 1, reason: "Stage" }));
    expect((await team.reserve(teamId, { memberId: owner.id, jobs: jobs(["a", "b", "c"]) })).ok).toBe(true);
    await team.advanceClockForTesting(1_000);
    // Refunded whole while three jobs are out: the pool gives what it holds; the three are owed.
    await deliverOk(story.refund(paid, (paid.data.object as { amount_paid: number }).amount_paid));
    expect((await teamRow(teamId)).credits).toBe(0);
    const reversal = async () =>
      (await db.select().from(teamPaymentReversals).where(eq(teamPaymentReversals.teamId, teamId)).get())!;
    expect(await reversal()).toMatchObject({ due: granted, taken: granted - 3, owed: 3, heldBack: 0 });
    // Two of them fail: their credits stay spent, not back in the pool.
    await team.release(teamId, [`${teamId}-a`, `${teamId}-b`], "Job refunded");
    expect((await teamRow(teamId)).credits).toBe(0);
    expect(await reversal()).toMatchObject({ owed: 3, heldBack: 2 });
    // An operator's credit spent after the refund, on a job that fails: it comes back.
    await team.grant(teamId, { amount: 1, key: `adjust:${teamId}`, reason: "Goodwill", actorId: null, kind: "adjust" });
    await team.advanceClockForTesting(1_000);
    expect((await team.reserve(teamId, { memberId: owner.id, jobs: jobs(["d"]) })).ok).toBe(true);
    await team.release(teamId, [`${teamId}-d`], "Job refunded");
    expect((await teamRow(teamId)).credits).toBe(1);
    expect(await reversal()).toMatchObject({ heldBack: 2 });
    // The ledger still sums to the pool, and names what it held back.
    const ledger = await db.select().from(teamLedger).where(eq(teamLedger.teamId, teamId)).all();
    expect(ledger.reduce((n, r) => n + r.amount, 0)).toBe(1);
    expect(ledger.filter((r) => r.idempotencyKey.startsWith("held-back:")).map((r) => r.amount)).toEqual([-1, -1]);
  });

  it("a second refund owes the credits its jobs hold, though an earlier refund's jobs were delivered since", async () => {
    const { owner, teamId, story, paid, granted, team } = await paidOneSeat();
    const job = (name: string) => [{ jobId: `${teamId}-${name}`, amount: 1, reason: "Stage" }];
    expect((await team.reserve(teamId, { memberId: owner.id, jobs: job("a") })).ok).toBe(true);
    await team.advanceClockForTesting(1_000);
    await deliverOk(story.refund(paid, (paid.data.object as { amount_paid: number }).amount_paid));
    const reversals = () =>
      db
        .select()
        .from(teamPaymentReversals)
        .where(eq(teamPaymentReversals.teamId, teamId))
        .orderBy(teamPaymentReversals.createdAt)
        .all();
    expect(await reversals()).toMatchObject([{ taken: granted - 1, owed: 1, heldBack: 0 }]);
    // The job out at the first refund is delivered: that owed credit can never come back.
    await runInDurableObject(team, () => settle(db, teamId, `${teamId}-a`, "committed", "Image delivered", Date.now()));
    // A second seat, paid, then refunded whole while a job holds one of its credits.
    const second = story.seatsChanged(1, 2);
    for (const e of [second.event, story.paidBy(second.event)]) await deliverOk(e);
    const bought = creditsForProration(second.paid);
    expect((await teamRow(teamId)).credits).toBe(bought);
    await team.advanceClockForTesting(1_000);
    expect((await team.reserve(teamId, { memberId: owner.id, jobs: job("b") })).ok).toBe(true);
    await team.advanceClockForTesting(1_000);
    await deliverOk(story.refund(second.event, second.paid));
    expect(await reversals()).toMatchObject([
      { owed: 1, heldBack: 0 },
      { taken: bought - 1, owed: 1, heldBack: 0 },
    ]);
    // The job fails: its credit stays with the refunded payment, not in the pool.
    await team.release(teamId, [`${teamId}-b`], "Job refunded");
    expect((await teamRow(teamId)).credits).toBe(0);
    expect(await reversals()).toMatchObject([{ heldBack: 0 }, { heldBack: 1 }]);
  });

  it("a dispute won gives back what it took and what it held back since; later failures come back as usual", async () => {
    const { owner, teamId, story, paid, granted, team } = await paidOneSeat();
    const ids = [`${teamId}-a`, `${teamId}-b`];
    const jobs = ids.map((jobId) => ({ jobId, amount: 1, reason: "Stage" }));
    expect((await team.reserve(teamId, { memberId: owner.id, jobs })).ok).toBe(true);
    await team.advanceClockForTesting(1_000);
    await deliverOk(story.dispute(paid));
    expect((await teamRow(teamId)).credits).toBe(0);
    await team.release(teamId, [ids[0]!], "Job refunded");
    expect((await teamRow(teamId)).credits).toBe(0);
    await deliverOk(story.dispute(paid, "won"));
    // What the dispute took (granted - 2) and the one it held back; the other job is still out.
    expect((await teamRow(teamId)).credits).toBe(granted - 1);
    await team.release(teamId, [ids[1]!], "Job refunded");
    expect((await teamRow(teamId)).credits).toBe(granted);
    const ledger = await db.select().from(teamLedger).where(eq(teamLedger.teamId, teamId)).all();
    expect(ledger.reduce((n, r) => n + r.amount, 0)).toBe(granted);
  });

  it("the same event twice grants once, and so does another event about the same invoice", async () => {
    const { teamId, story } = await subscribedTeam(2);
    const { event, paid } = story.seatsChanged(2, 5);
    await deliverOk(event);
    const after = await teamRow(teamId);
    expect(after.seats).toBe(5);
    expect(await deliverOk(event)).toEqual({ received: true, outcome: "applied", duplicate: true });
    const again = { ...event, id: `evt_${randomToken(12)}` };
    expect(await deliverOk(again)).toEqual({ received: true, outcome: "applied", duplicate: true });
    expect((await teamRow(teamId)).credits).toBe(2 * TEAM_PLAN.creditsPerSeat + creditsForProration(paid));
    expect(await grants(teamId)).toHaveLength(2);
  });

  it("20 concurrent deliveries of the same event grant once", async () => {
    const { teamId, story } = await subscribedTeam(1);
    const { event, paid } = story.seatsChanged(1, 3);
    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await deliver(event);
        expect(res.status).toBe(200);
        return (await res.json()) as { duplicate: boolean };
      }),
    );
    expect(answers.filter((a) => !a.duplicate)).toHaveLength(1);
    const team = await teamRow(teamId);
    expect(team.seats).toBe(3);
    expect(team.credits).toBe(TEAM_PLAN.creditsPerSeat + creditsForProration(paid));
    expect((await grants(teamId)).filter((g) => g.idempotencyKey.startsWith("seats:"))).toHaveLength(1);
  });

  it("a declined renewal freezes the pool (jobs refused) and tells every member once; paying thaws and tells once", async () => {
    const mail = recordMail();
    const { owner, teamId, story } = await subscribedTeam(3);
    const agent = await signedIn();
    const gone = await signedIn();
    await addMember(teamId, agent.id);
    await addMember(teamId, gone.id);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, gone.id)));
    const pool = (await teamRow(teamId)).credits;
    const renewal = story.renewalDeclined(3);

    await deliverOk(renewal.declined);
    // Stripe's retry, declined again, and the first event delivered twice: no one is told twice.
    expect(await deliverOk(renewal.declinedAgain)).toMatchObject({ duplicate: true });
    expect(await deliverOk(renewal.declined)).toMatchObject({ duplicate: true });
    const frozen = await teamRow(teamId);
    expect(frozen.frozenAt).not.toBeNull();
    expect(frozen.credits).toBe(pool);
    const declinedMail = mail.filter((m) => m.subject.includes("did not go through"));
    expect(declinedMail.map((m) => m.to[0]).sort()).toEqual([owner.email, agent.email].sort());
    expect(declinedMail[0]!.text).toContain(`${pool} credits`);

    const job = { jobId: `job_${randomToken()}`, amount: 1, reason: "Staging" };
    const refused = await teamObject(env, teamId).reserve(teamId, { memberId: agent.id, jobs: [job] });
    expect(refused).toMatchObject({ ok: false, error: TEAM_POOL_FROZEN });

    expect(await deliverOk(renewal.paid)).toMatchObject({ outcome: "applied", duplicate: false });
    expect(await deliverOk(renewal.paid)).toMatchObject({ duplicate: true });
    const thawed = await teamRow(teamId);
    expect(thawed.frozenAt).toBeNull();
    expect(thawed.credits).toBe(pool + renewal.credits);
    const recovered = mail.filter((m) => m.subject.includes("went through"));
    expect(recovered.map((m) => m.to[0]).sort()).toEqual([owner.email, agent.email].sort());
    expect(mail).toHaveLength(4);
    const unsent = await db.select().from(teamNotices).where(eq(teamNotices.teamId, teamId)).all();
    expect(unsent.every((n) => n.sentAt !== null)).toBe(true);

    const taken = await teamObject(env, teamId).reserve(teamId, { memberId: agent.id, jobs: [job] });
    expect(taken).toMatchObject({ ok: true, status: "held" });
    await teamObject(env, teamId).release(teamId, [job.jobId], "Test cleanup");
  });

  it("a notice the mail service refused is sent by the team's alarm, still once per member", async () => {
    let down = true;
    const mail: string[] = [];
    const realFetch = globalThis.fetch;
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      if (!req.url.startsWith(`${env.MAIL_API_URL}/`)) return realFetch(input, init);
      if (down) return new Response("unavailable", { status: 503 });
      mail.push(((await req.json()) as { to: string[] }).to[0]!);
      return Response.json({ id: "m" });
    });
    const { owner, teamId, story } = await subscribedTeam(2);
    await deliverOk(story.renewalDeclined(2).declined);
    const rows = () => db.select().from(teamNotices).where(eq(teamNotices.teamId, teamId)).all();
    expect(await rows()).toMatchObject([{ email: owner.email, sentAt: null, attempts: 1 }]);
    down = false;
    expect(await runDurableObjectAlarm(teamObject(env, teamId))).toBe(true);
    expect(mail).toEqual([owner.email]);
    expect((await rows())[0]!.sentAt).not.toBeNull();
    await runDurableObjectAlarm(teamObject(env, teamId));
    expect(mail).toEqual([owner.email]);
  });

  it("the invitation cap follows the seat count the webhook raised", async () => {
    const { owner, teamId, story } = await subscribedTeam(1);
    const invite = (email: string) => act(teamId, owner.id, { intent: "invite", email });
    expect(await invite("first@example.test")).toMatchObject({ ok: false, error: NO_FREE_SEAT });
    await deliverOk(story.seatsChanged(1, 3).event);
    expect((await teamRow(teamId)).seats).toBe(3);
    expect(await invite("first@example.test")).toMatchObject({ ok: true });
    expect(await invite("second@example.test")).toMatchObject({ ok: true });
    expect(await invite("third@example.test")).toMatchObject({ ok: false, error: NO_FREE_SEAT });
  });

  it("an event naming another team's id with its own customer moves nothing of that team", async () => {
    const { teamId } = await subscribedTeam(2);
    const before = await teamRow(teamId);
    const stranger = new TeamStory(teamId);
    expect(await deliverOk(stranger.seatsChanged(2, 9).event)).toMatchObject({ outcome: "ignored" });
    expect(await teamRow(teamId)).toEqual(before);
  });
});

/** A Stripe client against a fake that answers the calls the seats action makes, and what it was asked. */
function seatsStripe(sub: { id: string; customer: string; quantity: number } | null) {
  const calls: { method: string; path: string; body: string }[] = [];
  const stripe = createStripe(
    { STRIPE_SECRET_KEY: "sk_test_fake", STRIPE_API_URL: "http://stripe.test" },
    async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      const method = init?.method ?? "GET";
      const body = typeof init?.body === "string" ? decodeURIComponent(init.body) : "";
      calls.push({ method, path: url.pathname, body });
      const at = Math.floor(Date.now() / 1000);
      const subscription = (quantity: number) =>
        subscriptionObject({
          id: sub!.id,
          customer: sub!.customer,
          itemId: "si_fake",
          price: seatPrice,
          status: "active",
          created: at,
          periodStart: at,
          periodEnd: at + 30 * DAY,
          metadata: {},
          latestInvoice: "in_fake",
          quantity,
        });
      if (sub && url.pathname === `/v1/subscriptions/${sub.id}`) {
        return Response.json(
          subscription(method === "POST" ? Number(/quantity\]=(\d+)/.exec(body)?.[1]) : sub.quantity),
        );
      }
      if (method === "POST" && url.pathname === "/v1/customers")
        return Response.json({ id: "cus_new", object: "customer" });
      if (url.pathname === "/v1/prices") return Response.json({ object: "list", data: [seatPrice], has_more: false });
      if (method === "POST" && url.pathname === "/v1/checkout/sessions") {
        return Response.json({
          id: "cs_test_fake",
          object: "checkout.session",
          url: "https://checkout.stripe.test/pay",
        });
      }
      return Response.json({ error: { type: "invalid_request_error", message: "unexpected" } }, { status: 404 });
    },
  );
  return { stripe, calls };
}

async function act(teamId: string, userId: string, fields: Record<string, string>, stripe = seatsStripe(null).stripe) {
  const input = teamActionInput.safeParse(fields);
  if (!input.success) throw new Error(input.error.message);
  const deps = { db, env, stripe, origin: "http://localhost", clock: Date.now, mailer: { async send() {} } };
  return runTeamAction(deps, teamId, userId, input.data);
}

describe("the owner's seats form", { timeout: 60_000 }, () => {
  it("buys the team plan: a team customer named after the team, then Stripe's checkout for that many seats", async () => {
    const owner = await signedIn();
    const teamId = await makeTeam(owner.id, { seats: 1, name: "Bayside Brokers" });
    const fake = seatsStripe(null);
    const res = await act(teamId, owner.id, { intent: "seats", seats: "4" }, fake.stripe);
    expect(res).toMatchObject({ ok: true, redirect: "https://checkout.stripe.test/pay" });
    expect((await teamRow(teamId)).stripeCustomerId).toBe("cus_new");
    const customer = fake.calls.find((c) => c.path === "/v1/customers");
    expect(customer?.body).toContain("name=Bayside Brokers");
    expect(customer?.body).toContain(`metadata[teamId]=${teamId}`);
    const checkout = fake.calls.find((c) => c.path === "/v1/checkout/sessions");
    expect(checkout?.body).toContain("line_items[0][quantity]=4");
    expect(checkout?.body).toContain(`subscription_data[metadata][teamId]=${teamId}`);
    // Nothing changes before Stripe's webhook says it was paid.
    expect(await teamRow(teamId)).toMatchObject({ seats: 1, credits: 0 });
  });

  it("changes a subscribed team's seats at Stripe, prorated now; the team's seats follow only the webhook", async () => {
    const { owner, teamId, story } = await subscribedTeam(3);
    const fake = seatsStripe({ id: story.subscription, customer: story.customer, quantity: 3 });
    const res = await act(teamId, owner.id, { intent: "seats", seats: "4" }, fake.stripe);
    expect(res).toMatchObject({ ok: true });
    const update = fake.calls.find((c) => c.method === "POST" && c.path === `/v1/subscriptions/${story.subscription}`);
    expect(update?.body).toContain("items[0][quantity]=4");
    expect(update?.body).toContain("proration_behavior=always_invoice");
    expect((await teamRow(teamId)).seats).toBe(3);
    await deliverOk(story.seatsChanged(3, 4).event);
    expect((await teamRow(teamId)).seats).toBe(4);
  });

  it("a stranger gets 404, a team admin or agent 403, a quantity out of 1..50 400; Stripe is not called, nothing changes", async () => {
    const { teamId, story } = await subscribedTeam(3);
    const admin = await signedIn();
    const agent = await signedIn();
    const stranger = await signedIn();
    await addMember(teamId, admin.id, "team_admin");
    await addMember(teamId, agent.id);
    const fake = seatsStripe({ id: story.subscription, customer: story.customer, quantity: 3 });
    const before = await stateDigest({ env, bucket: env.PHOTOS });
    const refusals: [string, string, number, string | null][] = [
      ["stranger", stranger.id, 404, null],
      ["team admin", admin.id, 403, TEAM_OWNER_ONLY],
      ["agent", agent.id, 403, TEAM_OWNER_ONLY],
    ];
    for (const [who, userId, status, message] of refusals) {
      const res = await act(teamId, userId, { intent: "seats", seats: "4" }, fake.stripe);
      expect(res.ok, who).toBe(false);
      if (res.ok) continue;
      expect(STATUS[res.code], who).toBe(status);
      if (message) expect(res.error, who).toBe(message);
    }
    // What the page's action reads the form with (readForm): a quantity out of range is 400 with the range's words.
    for (const seats of ["0", "51", "four", "", "2.5"]) {
      const parsed = checkFields(teamActionInput, { intent: "seats", seats });
      expect(parsed, seats).toMatchObject({ ok: false, code: "invalid" });
      if (!parsed.ok) expect(STATUS[parsed.code]).toBe(400);
      if (!parsed.ok) expect(parsed.error, seats).toBe(SEATS_RANGE_MESSAGE);
    }
    expect(checkFields(teamActionInput, { intent: "seats", seats: "50" })).toMatchObject({ ok: true });
    const invite = await act(teamId, agent.id, { intent: "invite", email: "x@example.test" });
    expect(invite).toMatchObject({ ok: false, error: TEAM_ADMIN_ONLY });
    expect(fake.calls).toEqual([]);
    expect(await stateDigest({ env, bucket: env.PHOTOS })).toEqual(before);
    expect((await teamRow(teamId)).seats).toBe(3);
  });
});
