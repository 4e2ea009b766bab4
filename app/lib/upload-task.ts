// One photo's resumable upload in the browser (docs/decisions/0040): declare,
// send the thumbnail, send the chunks the server does not have yet, complete.
// States are the spec's: running, pausing, paused, canceling, canceled,
// success, error. Network failures are retried with backoff for up to 10
// minutes; pausing aborts the request in flight, and resuming first asks the
// server which chunks it already stored, so nothing finished is sent again.
import type { ImageType } from "~/shared/image-format";
import { UPLOAD_MESSAGES } from "~/shared/upload-rules";
import { abortableSleep, abortError, isAbort, type Transport, type TransportRequest } from "./upload-transport";

export type UploadState = "running" | "pausing" | "paused" | "canceling" | "canceled" | "success" | "error";

export interface UploadSource {
  photo: Blob;
  thumb: Blob;
  /** The chosen file's name; the server derives the photo's name from it. */
  name: string;
  type: ImageType;
}

export interface UploadSnapshot<P = unknown> {
  state: UploadState;
  sentBytes: number;
  totalBytes: number;
  /** Retrying after a network failure (still "running"). */
  retrying: boolean;
  /** Offline: waiting for the network to come back before the next try (still "running"). */
  waitingForNetwork: boolean;
  error: string | null;
  /** The error is a refusal by the server, which deleted what it had: trying again cannot help. */
  final: boolean;
  photo: P | null;
}

/** The upload session the server declared: what a task resumed after a reload starts from. */
export interface UploadSession {
  id: string;
  chunkSize: number;
  chunkCount: number;
}

/** Whether the network is there, and a way to wait for it (app/lib/network.ts in the browser). */
export interface NetworkWatch {
  /** After a failed request: is the network there at all? (offline flag, then a probe) */
  reachable(signal: AbortSignal): Promise<boolean>;
  /** Resolves once the network answers again; rejects with an AbortError when aborted. */
  waitOnline(signal: AbortSignal): Promise<void>;
}

export interface UploadOptions {
  /** Carry on an upload the server already declared (a reload, a crash): no new declaration. */
  session?: UploadSession;
  /** Called once the server has declared the upload, so it can be kept for a resume. */
  onSession?: (session: UploadSession) => void;
  network?: NetworkWatch;
  retryWindowMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
}

/** The upload cannot go on: the server refused it (`final`: it deleted what it had), or the task gave up trying. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly final: boolean,
  ) {
    super(message);
  }
}

/** The server's refusal, final; without its words, the task gives up and may be tried again. */
function refusedBy(status: number, text: string | null | undefined): Refused {
  return text ? new Refused(status, text, true) : new Refused(status, UPLOAD_MESSAGES.gaveUp, false);
}

const RETRYABLE = (status: number) => status === 0 || status === 408 || status === 429 || status >= 500;

function errorText(body: unknown): string | null {
  return body && typeof body === "object" && "error" in body && typeof body.error === "string" ? body.error : null;
}

export class UploadTask<P = unknown> {
  #state: UploadState = "running";
  #listeners = new Set<(s: UploadSnapshot<P>) => void>();
  #id: string | null = null;
  #chunkSize = 0;
  #chunkCount = 0;
  #stored = new Set<number>();
  #thumbStored = false;
  #inFlight = 0;
  #retrying = false;
  #error: string | null = null;
  #final = false;
  #photo: P | null = null;
  #controller: AbortController | null = null;
  #run = 0;
  #snapshot: UploadSnapshot<P>;
  #waitingForNetwork = false;
  readonly #opts: Required<Omit<UploadOptions, "session" | "onSession" | "network">> & UploadOptions;

  constructor(
    readonly source: UploadSource,
    readonly transport: Transport,
    opts: UploadOptions = {},
  ) {
    this.#opts = {
      retryWindowMs: 10 * 60 * 1000,
      backoffBaseMs: 1000,
      backoffMaxMs: 30_000,
      sleep: abortableSleep,
      now: () => Date.now(),
      ...opts,
    };
    if (opts.session) {
      this.#id = opts.session.id;
      this.#chunkSize = opts.session.chunkSize;
      this.#chunkCount = opts.session.chunkCount;
    }
    this.#snapshot = this.#makeSnapshot();
  }

  get uploadId(): string | null {
    return this.#id;
  }

  /** A stable object per change, for React's useSyncExternalStore. */
  snapshot(): UploadSnapshot<P> {
    return this.#snapshot;
  }

  subscribe(listener: (s: UploadSnapshot<P>) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  start(): void {
    void this.#go();
  }

  /** Only from running. */
  pause(): boolean {
    if (this.#state !== "running") return false;
    this.#set("pausing");
    this.#controller?.abort();
    return true;
  }

  /** Only from paused or pausing. */
  resume(): boolean {
    if (this.#state !== "paused" && this.#state !== "pausing") return false;
    this.#set("running");
    void this.#go();
    return true;
  }

  /** After an error: carry on from what the server already has. */
  retry(): boolean {
    if (this.#state !== "error") return false;
    this.#error = null;
    this.#final = false;
    this.#set("running");
    void this.#go();
    return true;
  }

  /**
   * From running or pausing (the spec), and from paused too: a paused upload
   * must be cancellable. Deletes what the server stored.
   */
  cancel(): boolean {
    if (this.#state !== "running" && this.#state !== "pausing" && this.#state !== "paused") return false;
    this.#run++;
    this.#controller?.abort();
    this.#set("canceling");
    const id = this.#id;
    void (async () => {
      if (id) {
        const signal = new AbortController().signal;
        for (let attempt = 0; attempt < 3; attempt++) {
          const res = await this.transport
            .send({ method: "DELETE", url: `/api/uploads/${id}`, signal })
            .catch(() => ({ status: 0, body: null }));
          // Anything but a network failure is final; the server's cron removes what a failed cancel leaves.
          if (!RETRYABLE(res.status)) break;
        }
      }
      this.#set("canceled");
    })();
    return true;
  }

  #makeSnapshot(): UploadSnapshot<P> {
    let sent = this.#inFlight;
    for (const i of this.#stored) sent += this.#chunkLength(i);
    return {
      state: this.#state,
      sentBytes: Math.min(sent, this.source.photo.size),
      totalBytes: this.source.photo.size,
      retrying: this.#retrying,
      waitingForNetwork: this.#waitingForNetwork,
      error: this.#error,
      final: this.#final,
      photo: this.#photo,
    };
  }

  #emit(): void {
    this.#snapshot = this.#makeSnapshot();
    for (const l of this.#listeners) l(this.#snapshot);
  }

  #set(state: UploadState): void {
    this.#state = state;
    if (state !== "running") {
      this.#retrying = false;
      this.#waitingForNetwork = false;
    }
    this.#emit();
  }

  #chunkLength(i: number): number {
    if (this.#chunkCount === 0) return 0;
    return i === this.#chunkCount - 1
      ? this.source.photo.size - this.#chunkSize * (this.#chunkCount - 1)
      : this.#chunkSize;
  }

  async #go(): Promise<void> {
    const run = ++this.#run;
    const controller = new AbortController();
    this.#controller = controller;
    try {
      await this.#work(controller.signal);
      // Finished before a pause could stop it: the photo is stored either way.
      if (run === this.#run && (this.#state === "running" || this.#state === "pausing")) this.#set("success");
    } catch (err) {
      if (run !== this.#run) return;
      if (isAbort(err)) {
        if (this.#state === "pausing") this.#set("paused");
        return;
      }
      this.#error = err instanceof Refused ? err.message : UPLOAD_MESSAGES.gaveUp;
      this.#final = err instanceof Refused && err.final;
      this.#set("error");
    }
  }

  /** Sends one request, retrying network failures and server errors with backoff. */
  async #call(req: Omit<TransportRequest, "signal">, signal: AbortSignal, accept: number[] = []) {
    let firstFailure: number | null = null;
    for (let attempt = 0; ; attempt++) {
      if (signal.aborted) throw abortError();
      const res = await this.transport.send({ ...req, signal });
      if ((res.status >= 200 && res.status < 300) || accept.includes(res.status)) {
        if (this.#retrying || this.#waitingForNetwork) {
          this.#retrying = false;
          this.#waitingForNetwork = false;
          this.#emit();
        }
        return res;
      }
      if (!RETRYABLE(res.status)) throw refusedBy(res.status, errorText(res.body));
      const network = this.#opts.network;
      if (res.status === 0 && network && !(await network.reachable(signal))) {
        // Offline: wait for the network instead of spending the retry window on a phone in a tunnel.
        this.#inFlight = 0;
        this.#retrying = false;
        this.#waitingForNetwork = true;
        this.#emit();
        await network.waitOnline(signal);
        this.#waitingForNetwork = false;
        this.#emit();
        firstFailure = null;
        attempt = -1;
        continue;
      }
      firstFailure ??= this.#opts.now();
      if (this.#opts.now() - firstFailure > this.#opts.retryWindowMs) throw refusedBy(0, null);
      this.#inFlight = 0;
      this.#retrying = true;
      this.#emit();
      const wait = Math.min(this.#opts.backoffBaseMs * 2 ** attempt, this.#opts.backoffMaxMs);
      await this.#opts.sleep(wait, signal);
    }
  }

  async #work(signal: AbortSignal): Promise<void> {
    if (this.#id === null) {
      const res = await this.#call(
        {
          method: "POST",
          url: "/api/uploads",
          contentType: "application/json",
          body: JSON.stringify({ name: this.source.name, size: this.source.photo.size, type: this.source.type }),
        },
        signal,
      );
      const body = res.body as { id: string; chunkSize: number; chunkCount: number };
      this.#id = body.id;
      this.#chunkSize = body.chunkSize;
      this.#chunkCount = body.chunkCount;
      this.#opts.onSession?.({ id: body.id, chunkSize: body.chunkSize, chunkCount: body.chunkCount });
    } else {
      // Resuming: the server is the record of what arrived.
      const res = await this.#call({ method: "GET", url: `/api/uploads/${this.#id}` }, signal);
      const body = res.body as { received: number[]; thumb: boolean; status: string };
      if (body.status === "open" || body.status === "completing") {
        this.#stored = new Set(body.received);
        this.#thumbStored = body.thumb;
        this.#emit();
      } else if (body.status === "completed") {
        // Finished before the tab went away, its answer lost: completing again returns the same photo.
        this.#stored = new Set(Array.from({ length: this.#chunkCount }, (_, i) => i));
        this.#thumbStored = true;
        this.#emit();
      } else {
        throw new Refused(410, UPLOAD_MESSAGES.expired, true);
      }
    }
    const base = `/api/uploads/${this.#id}`;

    for (let round = 0; round < 3; round++) {
      if (!this.#thumbStored) {
        await this.#call(
          { method: "PUT", url: `${base}/thumb`, body: this.source.thumb, contentType: this.source.thumb.type },
          signal,
        );
        this.#thumbStored = true;
      }
      for (let i = 0; i < this.#chunkCount; i++) {
        if (this.#stored.has(i)) continue;
        const start = i * this.#chunkSize;
        await this.#call(
          {
            method: "PUT",
            url: `${base}/chunks/${i}`,
            body: this.source.photo.slice(start, start + this.#chunkLength(i)),
            contentType: "application/octet-stream",
            onProgress: (loaded) => {
              this.#inFlight = Math.min(loaded, this.#chunkLength(i));
              this.#emit();
            },
          },
          signal,
        );
        this.#inFlight = 0;
        this.#stored.add(i);
        this.#emit();
      }
      const done = await this.#call({ method: "POST", url: `${base}/complete` }, signal, [409]);
      if (done.status !== 409) {
        this.#photo = (done.body as { photo: P }).photo;
        return;
      }
      // The server is missing something (or another tab is completing): learn what, and carry on.
      const body = done.body as { missing?: number[]; retry?: boolean; error?: string };
      if (body.retry) await this.#opts.sleep(this.#opts.backoffBaseMs, signal);
      const status = await this.#call({ method: "GET", url: base }, signal);
      const s = status.body as { received: number[]; thumb: boolean; status: string };
      if (s.status !== "open" && s.status !== "completing") throw refusedBy(409, body.error);
      this.#stored = new Set(s.received);
      this.#thumbStored = s.thumb;
      this.#emit();
    }
    throw refusedBy(409, null);
  }
}
