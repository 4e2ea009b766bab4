// Uploads kept in the browser until the server confirms them
// (docs/decisions/0130-uploads-survive-the-tab.md): the prepared photo, its
// thumbnail and the upload session live in IndexedDB, so a reload, a crash or
// a phone that discards a background tab loses nothing: /dashboard reads them
// back and resumes from the chunks the server reports. A record is deleted
// when the server confirms completion, when the upload is canceled, or when
// the server no longer knows it; records older than the server's own 24 h
// clean-up are dropped unread.
import type { ImageType } from "~/shared/image-format";
import type { UploadSession } from "./upload-task";

export interface StoredUpload {
  key: string;
  /** Whose upload this is (the signed-in address): another account on the same browser never resumes it. */
  owner: string;
  name: string;
  type: ImageType;
  photo: Blob;
  thumb: Blob;
  session: UploadSession | null;
  createdAt: number;
}

const DB_NAME = "stagewise-uploads";
const STORE = "uploads";
const MAX_AGE_MS = 24 * 60 * 60 * 1000;

let opening: Promise<IDBDatabase | null> | null = null;

function open(): Promise<IDBDatabase | null> {
  if (typeof indexedDB === "undefined") return Promise.resolve(null);
  opening ??= new Promise((resolve) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE, { keyPath: "key" });
    req.onsuccess = () => resolve(req.result);
    // Private modes and full disks refuse storage: uploads still work, they just do not survive a reload.
    req.onerror = () => resolve(null);
    req.onblocked = () => resolve(null);
  });
  return opening;
}

function run<T>(mode: IDBTransactionMode, fn: (store: IDBObjectStore) => IDBRequest<T>): Promise<T | null> {
  return open().then(
    (db) =>
      new Promise<T | null>((resolve) => {
        if (!db) return resolve(null);
        try {
          const tx = db.transaction(STORE, mode);
          const req = fn(tx.objectStore(STORE));
          tx.oncomplete = () => resolve(req.result);
          tx.onerror = () => resolve(null);
          tx.onabort = () => resolve(null);
        } catch {
          resolve(null);
        }
      }),
  );
}

// One change at a time, in order: a session saved just before the upload's completion must not bring back
// the record its completion deleted.
let queue: Promise<unknown> = Promise.resolve();
function inOrder<T>(fn: () => Promise<T>): Promise<T> {
  const next = queue.then(fn, fn);
  queue = next.catch(() => undefined);
  return next;
}

export function newUploadKey(): string {
  return crypto.randomUUID();
}

/** Keeps (or updates) one upload; false when the browser refused to store it. */
export function keepUpload(record: StoredUpload): Promise<boolean> {
  return inOrder(async () => (await run("readwrite", (s) => s.put(record))) !== null);
}

export function saveSession(key: string, session: UploadSession): Promise<void> {
  return inOrder(async () => {
    const record = await run<StoredUpload | undefined>("readonly", (s) => s.get(key));
    if (record) await run("readwrite", (s) => s.put({ ...record, session }));
  });
}

export function forgetUpload(key: string): Promise<void> {
  return inOrder(async () => {
    await run("readwrite", (s) => s.delete(key));
  });
}

/** This account's pending uploads, oldest first; stale ones are deleted. */
export async function pendingUploads(owner: string, now = Date.now()): Promise<StoredUpload[]> {
  const all = (await run<StoredUpload[]>("readonly", (s) => s.getAll())) ?? [];
  const fresh: StoredUpload[] = [];
  for (const r of all) {
    if (now - r.createdAt > MAX_AGE_MS) await forgetUpload(r.key);
    else if (r.owner === owner) fresh.push(r);
  }
  return fresh.sort((a, b) => a.createdAt - b.createdAt);
}
