import { describe, expect, inject, it } from "vitest";
import { claimJpeg, claimPng } from "../fixtures/images.ts";
import { baseUrl, browserForFile, createUser, signedInContext } from "./browser.ts";

// Photos whose header claims absurd dimensions (issue 13,
// docs/decisions/0103-pixel-limits.md): the upload panel says why before a
// byte is sent, the server refuses them with the same message and stores
// nothing, the provider emulator refuses them without allocating, and the
// stack stays healthy.

/** The start of UPLOAD_MESSAGES.tooManyPixels (app/shared/upload-rules.ts), the words the person reads. */
const SIZE_MESSAGE = "This photo is too large in pixels";

const b = browserForFile();

const CLAIMS = [
  ["60000x60000.png", "image/png", claimPng(60000, 60000)],
  ["4294967295x1.png", "image/png", claimPng(4294967295, 1)],
  ["65535x65535.jpg", "image/jpeg", claimJpeg(65535, 65535)],
] as const;

async function api(cookie: string, method: string, path: string, body?: object | Uint8Array) {
  const json = body !== undefined && !(body instanceof Uint8Array);
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: {
      Cookie: cookie,
      Origin: new URL(baseUrl()).origin,
      ...(json ? { "Content-Type": "application/json" } : {}),
    },
    body: json ? JSON.stringify(body) : body ? new Blob([body as Uint8Array<ArrayBuffer>]) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

describe("photos that claim absurd dimensions", () => {
  it("are refused in the upload panel with the size message, before any upload request", async () => {
    const user = await createUser({ credits: 1 });
    const page = await b.newPage(await signedInContext(b, user));
    await page.goto("/dashboard?upload=1");
    await page.waitForSelector("html[data-hydrated=true]");
    const sent: string[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/uploads")) sent.push(r.url());
    });
    const message = page.getByTestId("upload-message");
    for (const [name, mimeType, bytes] of CLAIMS) {
      await page.getByTestId("upload-input").setInputFiles({ name, mimeType, buffer: Buffer.from(bytes) });
      await message.filter({ hasText: SIZE_MESSAGE }).waitFor();
      // The next file must show its own message, so clear this one by reloading.
      await page.reload();
      await page.waitForSelector("html[data-hydrated=true]");
    }
    expect(sent).toEqual([]);
  });

  it("sent straight to the API: a 4xx with the size message on the first chunk, nothing stored, the stack healthy", async () => {
    const user = await createUser({ credits: 1 });
    const cookie = `sw_session=${user.sessionToken}`;
    for (const [name, type, bytes] of CLAIMS) {
      const created = await api(cookie, "POST", "/api/uploads", { name, size: bytes.byteLength, type });
      expect(created.status, name).toBe(201);
      const id = created.body.id as string;
      const chunk = await api(cookie, "PUT", `/api/uploads/${id}/chunks/0`, bytes);
      expect(chunk.status, name).toBeGreaterThanOrEqual(400);
      expect(chunk.status, name).toBeLessThan(500);
      expect(String(chunk.body.error), name).toContain(SIZE_MESSAGE);
      const done = await api(cookie, "POST", `/api/uploads/${id}/complete`);
      expect(done.status, name).toBeGreaterThanOrEqual(400);
      expect(done.status, name).toBeLessThan(500);
    }
    // Nothing stored: the library is empty and no upload is left open.
    const library = await fetch(`${baseUrl()}/api/photos`, { headers: { Cookie: cookie } });
    expect(library.status).toBe(200);
    expect(((await library.json()) as { photos: unknown[] }).photos).toEqual([]);

    // The provider emulator answers like the provider, without allocating the claimed pixels.
    const provider = `http://127.0.0.1:${inject("ports").provider}`;
    const key = inject("stackVars").PROVIDER_API_KEY ?? "";
    for (const [name, type, bytes] of CLAIMS) {
      const form = new FormData();
      form.set("input_image", new Blob([bytes], { type }), name);
      form.set("room_type", "livingroom");
      form.set("design_style", "modern");
      const started = Date.now();
      const res = await fetch(`${provider}/generate_designs`, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}` },
        body: form,
      });
      expect(res.status, name).toBe(200);
      expect((await res.json()) as { error: string }, name).toMatchObject({ error: "InvalidInput" });
      expect(Date.now() - started, name).toBeLessThan(2000);
    }
    const health = await fetch(`${baseUrl()}/api/health`);
    expect(health.status).toBe(200);
    const mail = await fetch(`http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=nobody@example.test`);
    expect(mail.status).toBe(200);
  });
});
