// The page's uploads, one task per kept upload (docs/decisions/0130): new ones
// are kept in IndexedDB before their first byte leaves, and the ones a reload
// or crash interrupted are read back and resumed. One task per upload for the
// life of the page, so coming back to /dashboard never starts a second copy
// of an upload still running.
import type { ImageType } from "~/shared/image-format";
import { browserNetwork } from "./network";
import { forgetUpload, keepUpload, newUploadKey, pendingUploads, type StoredUpload, saveSession } from "./upload-store";
import { UploadTask } from "./upload-task";
import { xhrTransport } from "./upload-transport";

export interface UploadedPhoto {
  id: string;
  name: string;
}

export interface QueuedUpload {
  key: string;
  task: UploadTask<UploadedPhoto>;
  /** Kept in the browser: survives a reload. */
  kept: boolean;
}

const live = new Map<string, QueuedUpload>();

function track(record: StoredUpload, kept: boolean): QueuedUpload {
  const task = new UploadTask<UploadedPhoto>(
    { photo: record.photo, thumb: record.thumb, name: record.name, type: record.type },
    xhrTransport(),
    {
      session: record.session ?? undefined,
      onSession: (s) => void saveSession(record.key, s),
      network: browserNetwork,
    },
  );
  const queued = { key: record.key, task, kept };
  live.set(record.key, queued);
  const stop = task.subscribe((snap) => {
    const settled =
      snap.state === "success" ||
      snap.state === "canceled" ||
      // A refusal is final (the server deleted what it had); giving up on the network is not.
      (snap.state === "error" && snap.final);
    if (settled) {
      stop();
      live.delete(record.key);
      void forgetUpload(record.key);
    }
  });
  return queued;
}

/** Keeps a prepared photo in the browser (when it knows whose it is), then starts sending it. */
export async function startUpload(
  owner: string | null,
  prepared: { photo: Blob; thumb: Blob; type: ImageType },
  name: string,
): Promise<QueuedUpload> {
  const record: StoredUpload = {
    key: newUploadKey(),
    owner: owner ?? "",
    name,
    type: prepared.type,
    photo: prepared.photo,
    thumb: prepared.thumb,
    session: null,
    createdAt: Date.now(),
  };
  const kept = owner !== null && (await keepUpload(record));
  const queued = track(record, kept);
  queued.task.start();
  return queued;
}

/** This account's uploads that a reload or crash interrupted, resumed (or the live task when still running). */
export async function resumePending(owner: string, except: ReadonlySet<string> = new Set()): Promise<QueuedUpload[]> {
  const records = await pendingUploads(owner);
  const out: QueuedUpload[] = [];
  for (const r of records) {
    if (except.has(r.key)) continue;
    const running = live.get(r.key);
    if (running) {
      out.push(running);
      continue;
    }
    const queued = track(r, true);
    queued.task.start();
    out.push(queued);
  }
  return out;
}
