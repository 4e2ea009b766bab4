// The structure check as a message and its answer (docs/decisions/0188-the-check-off-the-object.md): the user's
// object names two stored pictures, the check Worker (workers/checker) reads them, has the platform's image service
// reduce them, compares them, and answers the object with a verdict. No pixel of either picture reaches the object.
import type { ResultKind } from "./measures.ts";
/** What a check says: passed or refused with the score, or unchecked when it could not judge. */
export interface Checked {
  verdict: "passed" | "refused" | "unchecked";
  score: number | null;
}

/** What the check says when it cannot judge: delivered and charged as any other result, never refused for it. */
export const UNCHECKED: Checked = { verdict: "unchecked", score: null };

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
}

/** Whether `value` is a Checked (the object takes it from another Worker, so it looks before trusting it). */
export function isChecked(value: unknown): value is Checked {
  if (typeof value !== "object" || value === null) return false;
  const { verdict, score } = value as Record<string, unknown>;
  if (verdict === "unchecked") return score === null;
  return (verdict === "passed" || verdict === "refused") && typeof score === "number" && Number.isFinite(score);
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
}

export function isCheckTiming(value: unknown): value is CheckTiming {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return ["receivedAt", "imagesStart", "imagesEnd", "imagesCalls", "judgedAt"].every(
    (k) => typeof v[k] === "number" && Number.isFinite(v[k]),
  );
}
