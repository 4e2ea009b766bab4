import { mkdtempSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { unzipSync } from "fflate";
import jpeg from "jpeg-js";
import jsQRModule from "jsqr";
import type { Download } from "playwright-core";
import { expect } from "vitest";
import { makeJpeg } from "../fixtures/images.ts";
import { baseUrl, type FixtureUser } from "./browser.ts";

// What the MLS end-to-end tests share (test/e2e/mls.e2e.ts, mls-profiles.e2e.ts): calls as a signed-in user, an
// upload through the real chunked upload API, a staging job through the provider emulator, a folder made through
// the dashboard's own form, the QR code read off a JPEG and a ZIP read whole.

export function api(user: FixtureUser) {
  const headers = { Cookie: `sw_session=${user.sessionToken}`, Origin: baseUrl() };
  // biome-ignore lint/suspicious/noExplicitAny: test helper answering JSON or the Response
  return async (method: string, path: string, body?: unknown, raw = false): Promise<any> => {
    const isBytes = body instanceof Uint8Array;
    const isForm = body instanceof URLSearchParams;
    const res = await fetch(`${baseUrl()}${path}`, {
      method,
      redirect: "manual",
      headers: {
        ...headers,
        ...(body !== undefined && !isBytes && !isForm ? { "Content-Type": "application/json" } : {}),
      },
      body: body === undefined ? undefined : isBytes || isForm ? (body as BodyInit) : JSON.stringify(body),
    });
    if (raw) return res;
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
}

export type Api = ReturnType<typeof api>;

export async function upload(call: Api, bytes: Uint8Array, name: string): Promise<string> {
  const created = (await call("POST", "/api/uploads", { name, size: bytes.byteLength, type: "image/jpeg" })) as {
    status: number;
    body: { id: string; chunkSize: number };
  };
  expect(created.status).toBe(201);
  const { id, chunkSize } = created.body;
  expect(((await call("PUT", `/api/uploads/${id}/thumb`, makeJpeg(80, 60, 70))) as { status: number }).status).toBe(
    200,
  );
  for (let i = 0; i * chunkSize < bytes.byteLength; i++) {
    const r = (await call(
      "PUT",
      `/api/uploads/${id}/chunks/${i}`,
      bytes.subarray(i * chunkSize, (i + 1) * chunkSize),
    )) as {
      status: number;
    };
    expect(r.status).toBe(200);
  }
  const done = (await call("POST", `/api/uploads/${id}/complete`)) as {
    status: number;
    body: { photo: { id: string } };
  };
  expect(done.status).toBe(201);
  return done.body.photo.id;
}

/** Stages (or removes furniture from) a photo through the provider emulator; the new version's id. */
export async function stage(call: Api, photoId: string, kind: "stage" | "removal" = "stage"): Promise<string> {
  const started = (await call(
    "POST",
    `/api/photos/${photoId}/jobs`,
    kind === "stage" ? { kind, roomType: "Bedroom", designStyle: "Scandinavian" } : { kind },
  )) as { status: number; body: { job: { id: string } } };
  expect(started.status).toBe(202);
  for (let i = 0; i < 120; i++) {
    const r = (await call("GET", `/api/jobs/${started.body.job.id}`)) as {
      body: { job: { status: string; versionId: string | null } };
    };
    if (r.body.job.status === "succeeded") return r.body.job.versionId!;
    expect(r.body.job.status).not.toBe("failed");
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error("job did not finish");
}

/** A folder made through the dashboard's form, with the given photos moved into it; its id. */
export async function folderWith(call: Api, name: string, photoIds: string[]): Promise<string> {
  const form = (fields: Record<string, string>) => new URLSearchParams(fields);
  await call("POST", "/dashboard", form({ intent: "create-folder", name }), true);
  const html = await ((await call("GET", "/dashboard", undefined, true)) as Response).text();
  const folderId = /folder=([a-z2-7]+)/.exec(html)?.[1];
  expect(folderId).toBeTruthy();
  for (const photoId of photoIds) {
    const moved = (await call(
      "POST",
      "/dashboard",
      form({ intent: "move", photoId, folderId: folderId! }),
      true,
    )) as Response;
    expect(moved.status).toBeLessThan(400);
  }
  return folderId!;
}

// jsqr is a CommonJS bundle: its function is the module or its default, depending on the loader.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule }).default ?? jsQRModule) as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;

export function qrOf(bytes: Uint8Array): string | null {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  return jsQR(new Uint8ClampedArray(img.data), img.width, img.height)?.data ?? null;
}

export function pixels(bytes: Uint8Array) {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  return { width: img.width, height: img.height, data: img.data };
}

/** A browser download's bytes (the browser runs as a shared server: a download is saved, then read). */
export async function downloaded(download: Download): Promise<Uint8Array> {
  const path = `${mkdtempSync(`${tmpdir()}/stagewise-mls-`)}/${download.suggestedFilename()}`;
  await download.saveAs(path);
  return new Uint8Array(await readFile(path));
}

export function readZip(bytes: Uint8Array) {
  const files = unzipSync(bytes);
  const text = (name: string) => new TextDecoder().decode(files[name]);
  return { files, text, manifest: JSON.parse(text("manifest.json")) };
}

/** The rows of a CSV as we write it (cells quoted when they hold a comma, a quote or a line break). */
export function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  let i = 0;
  const endCell = () => {
    row.push(cell);
    cell = "";
  };
  while (i < text.length) {
    const ch = text[i]!;
    const next = text[i + 1];
    i++;
    if (quoted && ch === '"' && next === '"') {
      cell += '"';
      i++;
    } else if (ch === '"') quoted = !quoted;
    else if (quoted) cell += ch;
    else if (ch === ",") endCell();
    else if (ch === "\r" && next === "\n") {
      endCell();
      rows.push(row);
      row = [];
      i++;
    } else cell += ch;
  }
  return rows;
}

export const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
