import { log } from "@workers/lib/log";
import { sourceGrayKey } from "@workers/lib/source-gray";
import type { ResultKind } from "@workers/lib/structure/measures";
import {
  CHECK_TIMEOUT_MS,
  type Checked,
  type CheckRequest,
  type CheckTiming,
  isChecked,
  isCheckTiming,
  type PrepareRequest,
  UNCHECKED,
  type WireLimits,
} from "@workers/lib/structure/verdict";
import type { JobClock } from "./clock";

// The object's side of the structure check (docs/decisions/0188-the-check-off-the-object.md): a job's check is a
// message on the STRUCTURE_CHECKS queue, judged by the check Worker (workers/checker), whose answer comes back as an
// RPC (UserObject.structureChecked). While it waits the object's thread is free: its other requests run.

export type SendCheck = (request: CheckRequest | PrepareRequest) => Promise<void>;

/** The checks this instance of the object waits for, each answered once, by the check Worker or by the timeout. */
export class CheckDesk {
  #waiting = new Map<string, (checked: Checked, timing?: CheckTiming) => void>();
  /**
   * Tests and development only (UserObject.setStructureLimitsForTesting): limits sent with this user's checks, per
   * kind, in place of the production ones. A check Worker in production ignores them.
   */
  limitsForTesting: Partial<Record<ResultKind, WireLimits>> | null = null;
  /** Tests and development only (UserObject.setCheckDelayForTesting): each check takes this much longer. */
  delayMsForTesting: number | null = null;
  /**
   * Tests and development only (UserObject.stopChecksForTesting): the check Worker is "down": messages are dropped
   * unsent and each check waits this long before its result counts as unchecked. Null: checks run.
   */
  stoppedForTesting: number | null = null;

  constructor(
    private readonly send: SendCheck,
    private readonly timeoutMs = CHECK_TIMEOUT_MS,
  ) {}

  /** How many checks wait for their answer here. */
  get waiting(): number {
    return this.#waiting.size;
  }

  /**
   * Asks the check Worker to reduce a job's source while the provider works on it (ADR 0322), so its check later
   * reduces only the result. Nobody waits: a message that cannot be sent leaves the check to reduce both.
   */
  prepare(sourceKey: string): void {
    if (this.stoppedForTesting !== null || !sourceGrayKey(sourceKey)) return;
    this.send({ prepare: "source", sourceKey }).catch((err: unknown) => {
      log.warn(`source not sent ahead: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /**
   * Sends one check and waits for its verdict; unchecked when it cannot be sent or no answer comes in time. The round
   * trip, with the check Worker's own times when it sent them, is recorded on `clock`.
   */
  async request(check: Omit<CheckRequest, "checkId">, clock?: JobClock): Promise<Checked> {
    const checkId = crypto.randomUUID();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const sentAt = Date.now();
    let worker: CheckTiming | undefined;
    const answered = new Promise<Checked>((resolve) =>
      this.#waiting.set(checkId, (checked, timing) => {
        worker = timing;
        resolve(checked);
      }),
    );
    const stopped = this.stoppedForTesting;
    const waitMs = stopped ?? this.timeoutMs;
    const timedOut = new Promise<Checked>((resolve) => {
      timer = setTimeout(() => {
        log.warn("structure check not answered in time", { checkId, timeoutMs: waitMs });
        resolve({ ...UNCHECKED, cause: "timeout" });
      }, waitMs);
    });
    // A local queue may deliver inside send (the answer arrives before send returns): the waiter is set first.
    const limits = this.limitsForTesting?.[check.kind];
    const delayMs = this.delayMsForTesting;
    const message = { ...check, checkId, ...(limits ? { limits } : {}), ...(delayMs ? { delayMs } : {}) };
    const sent = (stopped !== null ? Promise.resolve() : this.send(message)).then(
      () => answered,
      (err: unknown) => {
        log.warn(`structure check not sent: ${err instanceof Error ? err.message : String(err)}`, { checkId });
        return { ...UNCHECKED, cause: "unsent" as const };
      },
    );
    try {
      const raced = await Promise.race([sent, timedOut]);
      // An unchecked answer without a cause comes from a check Worker of the release before: counted as failed.
      const checked = raced.verdict === "unchecked" && !raced.cause ? { ...raced, cause: "failed" as const } : raced;
      // The map's key is the one this object named (never one the answer names): stored only when the Worker wrote it.
      return checked.mapped && check.mapKey ? { ...checked, mapKey: check.mapKey } : { ...checked, mapped: false };
    } finally {
      clearTimeout(timer);
      this.#waiting.delete(checkId);
      clock?.check(sentAt, Date.now(), worker);
    }
  }

  /**
   * The check Worker's answer: true when a job here waited for it. An answer for a check nobody waits for (it timed
   * out, or the object restarted since it was sent) changes nothing. `timing`: the check Worker's own times, when it
   * sent them (clock.ts); anything else is ignored.
   */
  answer(checkId: string, checked: unknown, timing?: unknown): boolean {
    const waiter = this.#waiting.get(checkId);
    if (!waiter || !isChecked(checked)) return false;
    this.#waiting.delete(checkId);
    const { verdict, score, reasons, mapped, cause } = checked;
    waiter(
      { verdict, score, reasons: [...reasons], mapped, ...(cause ? { cause } : {}) },
      isCheckTiming(timing) ? timing : undefined,
    );
    return true;
  }
}
