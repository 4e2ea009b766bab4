import { useEffect, useRef, useState } from "react";
import type { JobRequestBody } from "~/shared/job-request";
import type { VersionView } from "~/shared/version-view";
import { api, type JobStart } from "./api";

// One AI job as the page sees it: start it with POST /api/photos/:id/jobs,
// then poll GET /api/jobs/:id until it settles. The job runs on the server
// whether or not this page stays open, so a dropped connection loses neither
// the result nor the credit; polling just asks again after a network blip.

/** How long a job usually takes, for the progress bar (seconds). */
export const EXPECTED_SECONDS = 15;
/** The pause after a failed request (offline, a server error) before asking again. */
const POLL_MS = 1500;
/** How long the server may hold one request (its limit is 20 s). */
const WAIT_SECONDS = 20;

const FAILED = "Failed to process image";

/** The states of a job: idle (not busy, no version), busy with seconds elapsed, failed (error), succeeded (version). */
export interface JobState {
  busy: boolean;
  error: string | null;
  version: VersionView | null;
  elapsed: number;
}

/** What the page sends to start a job: the request schema's input (app/shared/job-request.ts), checked by the compiler. */
export type JobBody = JobRequestBody;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts a job and follows it until it settles; `onSettled` runs after success or failure. */
export function useJob(onSettled?: () => void) {
  const [state, setState] = useState<JobState>({ busy: false, error: null, version: null, elapsed: 0 });
  const alive = useRef(true);
  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);

  /**
   * Starts a job with POST /api/photos/:id/jobs and follows it. The request carries a key of its own, so when its
   * answer is lost it is sent again and the server answers with the job it already started, charged once.
   */
  function run(photoId: string, body: JobBody) {
    return track(() => startJob({ photoId, body }));
  }

  /** Follows the job `start` begins (any POST answering `{ job: { id } }`), with the same progress and errors. */
  async function track(start: () => Promise<string>) {
    const started = Date.now();
    setState((s) => ({ ...s, busy: true, error: null, elapsed: 0 }));
    const tick = setInterval(() => {
      if (alive.current) setState((s) => ({ ...s, elapsed: Math.floor((Date.now() - started) / 1000) }));
    }, 1000);
    try {
      const jobId = await start();
      const version = await pollJob(jobId, () => alive.current);
      if (version !== undefined) setState({ busy: false, error: null, version, elapsed: 0 });
    } catch (err) {
      if (alive.current) {
        setState((s) => ({ ...s, busy: false, error: err instanceof Error ? err.message : FAILED }));
      }
    } finally {
      clearInterval(tick);
      onSettled?.();
    }
  }

  return { ...state, run, track, setError: (error: string | null) => setState((s) => ({ ...s, error })) };
}

/** How many times a job request is sent when the network loses it. */
const START_ATTEMPTS = 4;
/** Every sending lost: one of them may still have reached the server and started the job, so say so. */
const OFFLINE =
  "No connection: we could not confirm the job started. When you are back online, check the photo before trying again.";

/**
 * POST a job; its id, or the server's message as the error. The request carries a key of its own (the
 * Idempotency-Key header, which both job endpoints honour): a request lost on the way or on its way back is sent
 * again with the same key, after 1.5, 3 and 4.5 s, and the server starts the job once and answers every sending
 * with it (docs/decisions/0148-page-job-requests-sent-once.md).
 */
export async function startJob(start: JobStart): Promise<string> {
  const key = crypto.randomUUID();
  for (let attempt = 1; ; attempt++) {
    // Null: the request, or its answer on the way back, was lost.
    const answer = await api.startJob(start, key);
    if (answer && !answer.ok) throw new Error(answer.body.error ?? FAILED);
    if (answer?.body.job) return answer.body.job.id;
    if (attempt >= START_ATTEMPTS) throw new Error(answer ? FAILED : OFFLINE);
    await sleep(POLL_MS * attempt);
  }
}

/**
 * Waits until the job succeeds (its version), fails (throws its message) or the page goes away (undefined), with
 * a long poll: each request is held by the server until the job ends or WAIT_SECONDS pass
 * (docs/decisions/0146-job-long-poll.md), so the result shows the moment it is ready and a phone sends one request
 * instead of one every 1.5 s. A failed request is asked again after a pause: the job goes on.
 */
async function pollJob(jobId: string, alive: () => boolean): Promise<VersionView | null | undefined> {
  for (;;) {
    if (!alive()) return undefined;
    // Offline for a moment (null), or an answer without the job: the job goes on on the server; ask again.
    const answer = await api.job(jobId, WAIT_SECONDS);
    if (!alive()) return undefined;
    const polled = answer?.ok ? answer.body : null;
    if (!polled?.job) {
      await sleep(POLL_MS);
      continue;
    }
    if (polled.job.status === "succeeded") return polled.version ?? null;
    if (polled.job.status === "failed") throw new Error(polled.job.error ?? FAILED);
  }
}
