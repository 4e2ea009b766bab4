// The structure check's verdict, in one place (docs/decisions/0215-flag-when-unsure.md, 0188-the-check-off-the-object.md):
// the score the measures give (check.ts) becomes one of three outcomes by per-kind limits, and travels as a message
// and its answer. The user's object names two stored pictures, the check Worker (workers/checker) reads them, has the
// platform's image service reduce them, compares them, and answers the object with a verdict. No pixel of either
// picture reaches the object. Pure TypeScript, relative imports only.
import type { ResultKind } from "./measures.ts";

/** What the check makes of a result it could judge. */
export type Outcome = "passed" | "flagged" | "refused";

/** One kind's limits on the check's score (higher: further from the source's architecture). */
export interface StructureLimits {
  /** Above this the result is flagged: delivered and charged, marked "Check the walls and windows". */
  mark: number;
  /** Above this the result is refused: not charged. Number.POSITIVE_INFINITY: this kind never refuses. */
  refuse: number;
}

/**
 * The limits per kind. The score is the one ADR 0160 fixed (above 1 it used to refuse); measured on real AI results
 * (issue 43) that rule refused about four in ten results that kept the room, so no kind refuses until a method meets
 * the goals on held-out real pairs: every score over the old threshold marks, none refuses.
 */
export const STRUCTURE_LIMITS: Readonly<Record<ResultKind, StructureLimits>> = {
  stage: { mark: 1, refuse: Number.POSITIVE_INFINITY },
  removal: { mark: 1, refuse: Number.POSITIVE_INFINITY },
  sky: { mark: 1, refuse: Number.POSITIVE_INFINITY },
};

/** The outcome of a score under a kind's limits: refused above `refuse`, flagged above `mark`, else passed. */
export function outcomeOf(score: number, limits: StructureLimits): Outcome {
  if (score > limits.refuse) return "refused";
  if (score > limits.mark) return "flagged";
  return "passed";
}

/** What a check says: its outcome, score and where it saw the room change, or unchecked when it could not judge. */
export interface Checked {
  verdict: Outcome | "unchecked";
  score: number | null;
  /** Where the check saw the change ("upper left", ...): empty when it passed, or when it cannot say. */
  reasons: string[];
  /** The check Worker stored the change map under the request's `mapKey` (ADR 0260). */
  mapped?: boolean;
  /** On the object's side only: the key of that stored map (the request's `mapKey`, when `mapped`). */
  mapKey?: string;
  /**
   * For an unchecked result, why (counted on the operations page). From the check Worker: failed (reading or reducing
   * the pictures threw: R2 or the Images binding), unjudgeable (a picture missing, too small or not an image). Added
   * on the object's side: timeout (no answer in time: the check Worker down or late), unsent (the queue refused the
   * message), no_source (the job's source is gone).
   */
  cause?: UncheckedCause;
}

export type UncheckedCause = "timeout" | "unsent" | "failed" | "unjudgeable" | "no_source";

/** The causes that mean the check itself is not running (counted toward the hourly alarm, ADR 0262). */
export const OUTAGE_CAUSES: readonly UncheckedCause[] = ["timeout", "unsent", "failed"];

/** The Worker's own unchecked causes (the others are the object's). */
const WORKER_CAUSES = new Set(["failed", "unjudgeable"]);

/** What the check says when it cannot judge: delivered and charged as any other result, never refused for it. */
export const UNCHECKED: Checked = { verdict: "unchecked", score: null, reasons: [] };

/** Limits as JSON carries them: `refuse` null for never (JSON has no Infinity). */
export interface WireLimits {
  mark: number;
  refuse: number | null;
}

/** One check, as the user's object sends it on the STRUCTURE_CHECKS queue. */
export interface CheckRequest {
  /** Names the object's waiting answer; an answer naming no waiting check (the object restarted) is dropped. */
  checkId: string;
  /** The user whose object waits for the answer. */
  userId: string;
  kind: ResultKind;
  /** R2 keys (PHOTOS) of the picture the job started from and of its result. */
  sourceKey: string;
  resultKey: string;
  /**
   * Where the check Worker stores the change map (a gray PNG at the analysis size) of a result it judged: beside the
   * result, under the same user's photo prefix (ADR 0260). Absent: no map is stored.
   */
  mapKey?: string;
  /**
   * A team job's team (ADR 0280, 0298): its result, and so its change map, sit under the team's prefix
   * (`photos/team-<teamId>/`), where the check Worker may then store the map. Absent: a personal job.
   */
  teamId?: string;
  /**
   * Tests and development only: limits other than STRUCTURE_LIMITS for this check (set on the user's object with
   * setStructureLimitsForTesting). A check Worker in production ignores them (workers/checker/judge.ts).
   */
  limits?: WireLimits;
  /** Tests and development only: the check Worker waits this long before judging (UserObject.setCheckDelayForTesting). */
  delayMs?: number;
}

/**
 * A job's source to reduce while the provider works on it (ADR 0322), sent on the same queue as the checks: the check
 * Worker keeps its gray beside the original, and the job's check then reduces only the result. Nobody waits for it.
 */
export interface PrepareRequest {
  prepare: "source";
  sourceKey: string;
}

/** How long a job waits for its check's answer before it delivers the result unchecked (jobs/checks.ts). */
export const CHECK_TIMEOUT_MS = 20_000;

/**
 * A check message older than this was sent for a job that stopped waiting long ago: the check Worker drops it
 * rather than spend Images calls for nobody, and after an outage hold fresh checks behind the whole backlog.
 */
export const STALE_CHECK_MS = 3 * CHECK_TIMEOUT_MS;

export function isPrepareRequest(body: unknown): body is PrepareRequest {
  if (typeof body !== "object" || body === null) return false;
  const b = body as Record<string, unknown>;
  return b.prepare === "source" && typeof b.sourceKey === "string" && b.sourceKey.length > 0;
}

export function toWire(l: StructureLimits): WireLimits {
  return { mark: l.mark, refuse: Number.isFinite(l.refuse) ? l.refuse : null };
}

export function fromWire(l: WireLimits): StructureLimits {
  return { mark: l.mark, refuse: l.refuse ?? Number.POSITIVE_INFINITY };
}

/** Whether `value` is a WireLimits with a finite mark no higher than its refuse. */
export function isWireLimits(value: unknown): value is WireLimits {
  if (typeof value !== "object" || value === null) return false;
  const { mark, refuse } = value as Record<string, unknown>;
  if (typeof mark !== "number" || !Number.isFinite(mark) || mark < 0) return false;
  return refuse === null || (typeof refuse === "number" && Number.isFinite(refuse) && refuse >= mark);
}

/** At most this many reasons, each at most REASON_CHARS long, are taken from the check Worker. */
const MAX_REASONS = 8;
const REASON_CHARS = 80;

/** Whether `value` is a Checked (the object takes it from another Worker, so it looks before trusting it). */
export function isChecked(value: unknown): value is Checked {
  if (typeof value !== "object" || value === null) return false;
  const { verdict, score, reasons, mapped, cause } = value as Record<string, unknown>;
  if (mapped !== undefined && typeof mapped !== "boolean") return false;
  if (cause !== undefined && (verdict !== "unchecked" || typeof cause !== "string" || !WORKER_CAUSES.has(cause))) {
    return false;
  }
  if (
    !Array.isArray(reasons) ||
    reasons.length > MAX_REASONS ||
    !reasons.every((r) => typeof r === "string" && r.length > 0 && r.length <= REASON_CHARS)
  )
    return false;
  if (verdict === "unchecked") return score === null && reasons.length === 0 && mapped !== true;
  return (
    (verdict === "passed" || verdict === "flagged" || verdict === "refused") &&
    typeof score === "number" &&
    Number.isFinite(score)
  );
}

/**
 * What the check Worker says of its own time on one check, sent back with its answer (epoch ms, the machine's clock):
 * the job records where its time went (workers/objects/user/jobs/clock.ts, docs/decisions/0226).
 */
export interface CheckTiming {
  receivedAt: number;
  imagesStart: number;
  imagesEnd: number;
  imagesCalls: number;
  judgedAt: number;
  /** The source's gray was the copy reduced beside the provider call (ADR 0322), not reduced on the job's path. */
  sourceAhead?: boolean;
}

export function isCheckTiming(value: unknown): value is CheckTiming {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    ["receivedAt", "imagesStart", "imagesEnd", "imagesCalls", "judgedAt"].every(
      (k) => typeof v[k] === "number" && Number.isFinite(v[k]),
    ) &&
    (v.sourceAhead === undefined || typeof v.sourceAhead === "boolean")
  );
}
