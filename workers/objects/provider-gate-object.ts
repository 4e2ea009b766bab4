import { DurableObject } from "cloudflare:workers";
import { config } from "@workers/config";
import { devToolsEnabled } from "@workers/lib/dev-tools";
import { nextGrant, type Waiting } from "@workers/objects/gate/fair-share";

// The provider gate: one instance for the whole product ("global") that grants slots for provider calls, at most
// PROVIDER_CAP held at once. A user's object asks for a slot before a job's provider call and waits for the answer;
// the slot comes as a lease with an expiry, so an object that crashed while holding one cannot keep it; the object
// releases it when the job's provider work ends. Who is served next: gate/fair-share.ts. A request that is gone
// (its object evicted, restarted or crashed while it waited) never keeps a slot: the asker claims each grant, and a
// grant nobody claims is returned at once; an object's next instance drops its earlier instances' requests as well
// as their leases. docs/decisions/0186-one-provider-gate.md, 0230-a-gate-that-cannot-leak.md

/** A slot held. Leases are stored, so a gate that restarts still counts the calls in flight. */
export interface Lease {
  id: string;
  userId: string;
  /** What holds it (a job id), for the operations page and logs. */
  holder: string;
  /** The instance of the user's object that asked: a later instance of the same object means this one is gone. */
  instance?: string;
  grantedAt: number;
  expiresAt: number;
}

export interface SlotRequest {
  userId: string;
  holder: string;
  /** 1 for Professional, 0 otherwise. */
  priority: number;
  /** How long the lease lasts when its holder never releases it. */
  leaseMs: number;
  /** The asking object's instance (random per start); see Lease.instance. */
  instance?: string;
}

export interface Granted {
  leaseId: string;
  expiresAt: number;
  /** How long the request waited at the gate. */
  waitedMs: number;
}

export interface GateStats {
  cap: number;
  inUse: number;
  waiting: number;
  /** Requests waiting, per user. */
  waitingByUser: Record<string, number>;
  /** Slots held, per user. */
  inUseByUser: Record<string, number>;
  /** How long the request waiting longest has waited; null when none waits. */
  oldestWaitMs: number | null;
}

/**
 * Called by the gate when it grants a request, before it answers: the asker says whether it still wants the slot.
 * A call that fails (its object is gone) or answers false returns the slot at once. An RPC stub of a function in the
 * asking object, alive while its `acquire` call waits.
 */
export type Claim = (granted: Granted) => boolean | Promise<boolean>;

interface Waiter extends Waiting, SlotRequest {
  since: number;
  claim?: Claim;
  grant(granted: Granted): void;
  refuse(reason: Error): void;
}

/** Why a request was answered without a slot. */
export const SLOT_REQUEST_DROPPED = "the slot request was dropped: a later instance of its object asked";

/** The longest lease a request may ask for. */
export const MAX_LEASE_MS = 30 * 60 * 1000;
const LEASE_PREFIX = "lease:";

export class ProviderGate extends DurableObject<Env> {
  #leases = new Map<string, Lease>();
  #waiting = new Map<number, Waiter>();
  #seq = 0;
  #clockOffset = 0;
  #capForTesting: number | null = null;
  #alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.blockConcurrencyWhile(async () => {
      this.#clockOffset = (await ctx.storage.get<number>("clockOffset")) ?? 0;
      this.#capForTesting = (await ctx.storage.get<number>("capForTesting")) ?? null;
      for (const lease of (await ctx.storage.list<Lease>({ prefix: LEASE_PREFIX })).values()) {
        this.#leases.set(lease.id, lease);
      }
      this.#alarmAt = await ctx.storage.getAlarm();
    });
  }

  #now(): number {
    return Date.now() + this.#clockOffset;
  }

  get #cap(): number {
    return this.#capForTesting ?? config(this.env).PROVIDER_CAP;
  }

  /**
   * Waits for a slot; answers with its lease once granted. Waiting has no limit here: the caller holds the job.
   * `claim`: asked before the answer whether the caller still wants it (see Claim); without it, the grant is final.
   */
  acquire(request: SlotRequest, claim?: Claim): Promise<Granted> {
    const { userId, holder, priority, leaseMs } = request;
    if (typeof userId !== "string" || userId === "" || typeof holder !== "string" || holder === "") {
      throw new TypeError("a slot request names its user and holder");
    }
    if (!Number.isInteger(leaseMs) || leaseMs < 1000 || leaseMs > MAX_LEASE_MS) {
      throw new RangeError("leaseMs must be a whole number from 1000 to 1800000");
    }
    this.#reclaim();
    if (request.instance) this.#forgetEarlierInstances(userId, request.instance);
    if (claim !== undefined && typeof claim !== "function") throw new TypeError("claim must be a function");
    const answer = new Promise<Granted>((grant, refuse) => {
      const seq = ++this.#seq;
      this.#waiting.set(seq, {
        seq,
        userId,
        holder,
        priority: priority === 1 ? 1 : 0,
        leaseMs,
        ...(request.instance ? { instance: request.instance } : {}),
        since: this.#now(),
        ...(claim ? { claim } : {}),
        grant,
        refuse,
      });
    });
    // A request refused after its asker went away has nobody to answer: not an unhandled rejection here.
    answer.catch(() => undefined);
    this.#grant();
    return answer;
  }

  /** Gives a slot back; false when the lease was not held (already released, or reclaimed after its expiry). */
  release(leaseId: string): boolean {
    const held = this.#dropLease(leaseId);
    this.#reclaim();
    this.#grant();
    return held;
  }

  /** What the operations page shows; read-only. */
  stats(): GateStats {
    const now = this.#now();
    const waitingByUser: Record<string, number> = {};
    let oldest: number | null = null;
    for (const w of this.#waiting.values()) {
      waitingByUser[w.userId] = (waitingByUser[w.userId] ?? 0) + 1;
      oldest = oldest === null ? w.since : Math.min(oldest, w.since);
    }
    const live = [...this.#leases.values()].filter((l) => l.expiresAt > now);
    const inUseByUser: Record<string, number> = {};
    for (const l of live) inUseByUser[l.userId] = (inUseByUser[l.userId] ?? 0) + 1;
    return {
      cap: this.#cap,
      inUse: live.length,
      waiting: this.#waiting.size,
      waitingByUser,
      inUseByUser,
      oldestWaitMs: oldest === null ? null : now - oldest,
    };
  }

  /** A lease past its expiry is reclaimed here: its holder never released it. */
  override async alarm(): Promise<void> {
    this.#alarmAt = null;
    this.#reclaim();
    this.#grant();
  }

  /** Test and development only: a cap other than PROVIDER_CAP (null: back to it). */
  async setCapForTesting(cap: number | null): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Cap control is disabled");
    this.#capForTesting = cap;
    if (cap === null) await this.ctx.storage.delete("capForTesting");
    else await this.ctx.storage.put("capForTesting", cap);
    this.#grant();
  }

  /** Test and development only: moves this object's clock forward (leases expire on it). */
  async advanceClockForTesting(ms: number): Promise<void> {
    if (!devToolsEnabled(this.env)) throw new Error("Clock control is disabled");
    this.#clockOffset += ms;
    await this.ctx.storage.put("clockOffset", this.#clockOffset);
  }

  /**
   * A user's object runs as one instance at a time: leases its earlier instances took were never released (it was
   * evicted or restarted by a deploy mid-call), so they go now instead of at their expiry; and the requests they
   * left waiting go too, before one of them is granted a slot nobody would use.
   */
  #forgetEarlierInstances(userId: string, instance: string): void {
    const earlier = (w: { userId: string; instance?: string }) =>
      w.userId === userId && w.instance !== undefined && w.instance !== instance;
    for (const lease of this.#leases.values()) {
      if (!earlier(lease)) continue;
      console.warn(
        JSON.stringify({ msg: "provider slot released: its object restarted", userId, holder: lease.holder }),
      );
      this.#dropLease(lease.id);
    }
    for (const waiter of this.#waiting.values()) {
      if (!earlier(waiter)) continue;
      console.warn(
        JSON.stringify({ msg: "provider slot request dropped: its object restarted", userId, holder: waiter.holder }),
      );
      this.#waiting.delete(waiter.seq);
      waiter.refuse(new Error(SLOT_REQUEST_DROPPED));
    }
  }

  #dropLease(leaseId: string): boolean {
    const held = this.#leases.delete(leaseId);
    if (held) this.ctx.storage.delete(`${LEASE_PREFIX}${leaseId}`);
    return held;
  }

  /**
   * Answers a granted request once its asker has claimed the slot. When the claim fails (the asking object is gone:
   * evicted, restarted, crashed) or says no, the lease goes back at once and the next request is served.
   */
  async #answer(waiter: Waiter, lease: Lease, granted: Granted): Promise<void> {
    let claimed = false;
    let why = "declined";
    try {
      claimed = (await waiter.claim?.(granted)) === true;
    } catch (err) {
      why = err instanceof Error ? err.message : String(err);
    }
    if (claimed) {
      waiter.grant(granted);
      return;
    }
    console.warn(
      JSON.stringify({
        msg: "provider slot returned: nobody claimed it",
        userId: lease.userId,
        holder: lease.holder,
        why,
      }),
    );
    waiter.refuse(new Error(`the slot was not claimed (${why})`));
    if (this.#dropLease(lease.id)) this.#grant();
  }

  #reclaim(): void {
    const now = this.#now();
    for (const lease of this.#leases.values()) {
      if (lease.expiresAt > now) continue;
      console.warn(JSON.stringify({ msg: "provider slot reclaimed", userId: lease.userId, holder: lease.holder, now }));
      this.#dropLease(lease.id);
    }
  }

  /** Grants free slots to the requests the rule puts first, then sets the alarm for the next expiry. */
  #grant(): void {
    const now = this.#now();
    while (this.#leases.size < this.#cap) {
      const held = new Map<string, number>();
      for (const l of this.#leases.values()) held.set(l.userId, (held.get(l.userId) ?? 0) + 1);
      const next = nextGrant(this.#waiting.values(), held);
      if (!next) break;
      this.#waiting.delete(next.seq);
      const lease: Lease = {
        id: crypto.randomUUID(),
        userId: next.userId,
        holder: next.holder,
        ...(next.instance ? { instance: next.instance } : {}),
        grantedAt: now,
        expiresAt: now + next.leaseMs,
      };
      this.#leases.set(lease.id, lease);
      // Not awaited: the output gate holds the answer until the lease is stored.
      this.ctx.storage.put(`${LEASE_PREFIX}${lease.id}`, lease);
      const granted = { leaseId: lease.id, expiresAt: lease.expiresAt, waitedMs: now - next.since };
      if (next.claim) void this.#answer(next, lease, granted);
      else next.grant(granted);
    }
    this.#wakeAtNextExpiry();
  }

  #wakeAtNextExpiry(): void {
    let first: number | null = null;
    for (const l of this.#leases.values()) first = first === null ? l.expiresAt : Math.min(first, l.expiresAt);
    const at = first === null ? null : first - this.#clockOffset;
    if (at === this.#alarmAt) return;
    this.#alarmAt = at;
    if (at === null) this.ctx.storage.deleteAlarm();
    else this.ctx.storage.setAlarm(at);
  }
}
