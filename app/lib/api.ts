import type { JobRequestBody } from "~/shared/job-request";
import type { PhotoListing } from "~/shared/listing-look";
import type { LiveCredits } from "~/shared/live-credits";
import type { VersionView } from "~/shared/version-view";

// The browser's one way to our own API: every address it calls is built here, and every answer is read here into a
// typed shape, so a page never writes a URL or parses JSON by hand. Type imports only: nothing here adds to a bundle
// but these few functions. The one exception is the landing page's inline script (app/lib/islands.ts), which is
// serialised into the page and so can import nothing.

/** An answer: its status, and its JSON body (an empty object when it had none); null when the request was lost. */
export interface Answer<T> {
  ok: boolean;
  status: number;
  body: Partial<T> & { error?: string; code?: string };
}

/** One request to our API. A lost request, or a lost answer, is null; a body that is not JSON reads as {}. */
async function call<T>(path: string, init?: RequestInit): Promise<Answer<T> | null> {
  let res: Response;
  try {
    res = await fetch(path, init);
  } catch {
    return null;
  }
  const body = (await res.json().catch(() => ({}))) as Answer<T>["body"];
  return { ok: res.ok, status: res.status, body };
}

const FRESH: RequestInit = { cache: "no-store" };
/** A request of `method`, with `body` sent as JSON when there is one. */
const send = (method: string, body?: unknown, headers: Record<string, string> = {}): RequestInit =>
  body === undefined
    ? { method, headers }
    : { method, headers: { "Content-Type": "application/json", ...headers }, body: JSON.stringify(body) };
const post = (body?: unknown, headers?: Record<string, string>) => send("POST", body, headers);
const version = (photoId: string, versionId: string) =>
  `/api/photos/${encodeURIComponent(photoId)}/versions/${encodeURIComponent(versionId)}`;

/** GET /api/photos/:id/versions: the versions, and the listing (folder) the photo is in with its look. */
export interface VersionsAnswer {
  versions: VersionView[];
  listing: PhotoListing | null;
}

/** What a re-roll costs, said before it runs. */
export interface RerollQuote {
  cost: 0 | 1;
  message: string;
}

/** What a version's listing profile makes of it (docs/decisions/0110-mls-disclosure-and-original-pages.md). */
export interface DisclosureView {
  profile: { name: string; rule: string };
  exportable: boolean;
  reason: string | null;
  /** Flagged and not confirmed: "I checked the walls and windows" lets it out. */
  needsConfirmation: boolean;
  label: string[] | null;
  caption: string | null;
  downloadNeedsPage: boolean;
  page: { state: "live" | "withdrawn" | "none"; url: string | null };
  message: string | null;
}

export interface PolledJob {
  job: { status: string; error: string | null };
  version: VersionView | null;
}

/** What a re-roll sends (POST /api/jobs/:id/reroll): that its price was said and accepted. */
export interface RerollBody {
  acceptCharge: boolean;
}

/** Where a job starts: a photo's jobs, or a re-roll of an earlier job. */
export type JobStart = { photoId: string; body: JobRequestBody } | { rerollOf: string; body: RerollBody };

export const api = {
  versions: (photoId: string) => call<VersionsAnswer>(`/api/photos/${encodeURIComponent(photoId)}/versions`, FRESH),
  keep: (photoId: string, versionId: string) => call(`${version(photoId, versionId)}/keep`, post()),
  choose: (photoId: string, versionId: string) => call(`${version(photoId, versionId)}/choose`, post()),
  useLook: (photoId: string, versionId: string) => call(`${version(photoId, versionId)}/look`, post({})),
  disclosure: (photoId: string, versionId: string) =>
    call<{ disclosure: DisclosureView }>(`${version(photoId, versionId)}/disclosure`, FRESH),
  publishOriginal: (photoId: string, versionId: string) => call(`${version(photoId, versionId)}/link`, post()),
  confirmStructure: (photoId: string, versionId: string) =>
    call(`${version(photoId, versionId)}/confirm-structure`, post()),
  withdrawOriginal: (photoId: string, versionId: string, confirm: boolean) =>
    call(`${version(photoId, versionId)}/link`, send("DELETE", confirm ? { confirm: true } : undefined)),
  rerollQuote: (jobId: string) => call<{ quote: RerollQuote }>(`/api/jobs/${encodeURIComponent(jobId)}/reroll`, FRESH),
  /** Starts a job; `key` (an Idempotency-Key) makes a second sending answer the job the first one started. */
  startJob: (start: JobStart, key: string) =>
    call<{ job: { id: string } }>(
      "photoId" in start
        ? `/api/photos/${encodeURIComponent(start.photoId)}/jobs`
        : `/api/jobs/${encodeURIComponent(start.rerollOf)}/reroll`,
      post(start.body, { "Idempotency-Key": key }),
    ),
  /** The job, held by the server until it ends or `waitSeconds` pass (docs/decisions/0146-job-long-poll.md). */
  job: (jobId: string, waitSeconds: number) =>
    call<PolledJob>(`/api/jobs/${encodeURIComponent(jobId)}?wait=${waitSeconds}`, FRESH),
  /** Stores a removal's mask, painted on `source` ("original" or a version's id). */
  storeMask: (photoId: string, source: string, png: Blob) =>
    call<{ mask: { id: string } }>(
      `/api/photos/${encodeURIComponent(photoId)}/masks?source=${encodeURIComponent(source)}`,
      { method: "POST", headers: { "Content-Type": "image/png" }, body: png },
    ),
  me: () => call<LiveCredits>("/api/me", { headers: { Accept: "application/json" } }),
  /** Asks whether our origin answers at all: any status counts; throws when the request is lost or aborted. */
  health: async (signal: AbortSignal): Promise<void> => {
    const res = await fetch("/api/health", { cache: "no-store", signal });
    await res.body?.cancel();
  },
};
