// How one upload's requests leave the browser (app/lib/upload-task.ts): a request with progress and an abort
// signal, sent by XMLHttpRequest (fetch cannot report upload progress), and the abort helpers both sides use.

export interface TransportRequest {
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  body?: Blob | string;
  contentType?: string;
  onProgress?: (loadedBytes: number) => void;
  signal: AbortSignal;
}

/** Answers with status 0 when the network failed; rejects with an AbortError when aborted. */
export interface Transport {
  send(req: TransportRequest): Promise<{ status: number; body: unknown }>;
}

export function abortError(): DOMException {
  return new DOMException("The upload was interrupted.", "AbortError");
}

export function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === "AbortError";
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError());
    const timer = setTimeout(done, ms);
    function done() {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }
    function onAbort() {
      clearTimeout(timer);
      reject(abortError());
    }
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The browser's transport: XMLHttpRequest, because fetch cannot report upload
 * progress. A request that makes no progress for `stallMs` is treated as a
 * network failure (a phone can keep a dead connection open for minutes).
 */
export function xhrTransport(stallMs = 45_000): Transport {
  return {
    send({ method, url, body, contentType, onProgress, signal }) {
      return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(abortError());
        const xhr = new XMLHttpRequest();
        let stall: ReturnType<typeof setTimeout> | undefined;
        let stalled = false;
        const arm = () => {
          clearTimeout(stall);
          stall = setTimeout(() => {
            stalled = true;
            xhr.abort();
          }, stallMs);
        };
        const finish = () => {
          clearTimeout(stall);
          signal.removeEventListener("abort", onAbort);
        };
        const onAbort = () => xhr.abort();
        xhr.open(method, url);
        if (contentType) xhr.setRequestHeader("Content-Type", contentType);
        xhr.upload.onprogress = (e) => {
          arm();
          onProgress?.(e.loaded);
        };
        xhr.onprogress = arm;
        xhr.onload = () => {
          finish();
          let parsed: unknown = null;
          try {
            parsed = xhr.responseText ? JSON.parse(xhr.responseText) : null;
          } catch {
            parsed = null;
          }
          resolve({ status: xhr.status, body: parsed });
        };
        xhr.onerror = () => {
          finish();
          resolve({ status: 0, body: null });
        };
        xhr.onabort = () => {
          finish();
          if (stalled) resolve({ status: 0, body: null });
          else reject(abortError());
        };
        signal.addEventListener("abort", onAbort, { once: true });
        arm();
        xhr.send(body ?? null);
      });
    },
  };
}
