import { unzipSync } from "fflate";
import jpeg from "jpeg-js";
import jsQRModule from "jsqr";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { makeJpeg } from "../fixtures/images.ts";
import { baseUrl, createUser, type FixtureUser, type OpenBrowser, openBrowser, signedInContext } from "./browser.ts";

// MLS output (issue 16) in Chromium against the production build and the
// provider emulator: a labelled download whose QR code opens the original
// page, revoked to 410; a listing pack of 5 staged photos.

let b: OpenBrowser;
beforeAll(async () => {
  b = await openBrowser();
  await fetch(`http://127.0.0.1:${inject("ports").provider}/_emulator/mode`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ mode: "ok" }),
  });
});
afterAll(async () => {
  await b?.close();
});

function api(user: FixtureUser) {
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

type Api = ReturnType<typeof api>;

async function upload(call: Api, bytes: Uint8Array, name: string): Promise<string> {
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

async function stage(call: Api, photoId: string): Promise<string> {
  const started = (await call("POST", `/api/photos/${photoId}/jobs`, {
    kind: "stage",
    roomType: "Bedroom",
    designStyle: "Scandinavian",
  })) as { status: number; body: { job: { id: string } } };
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

// jsqr is a CommonJS bundle: its function is the module or its default, depending on the loader.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule }).default ?? jsQRModule) as unknown as (
  data: Uint8ClampedArray,
  width: number,
  height: number,
) => { data: string } | null;

function qrOf(bytes: Uint8Array): string | null {
  const img = jpeg.decode(bytes, { useTArray: true, formatAsRGBA: true });
  return jsQR(new Uint8ClampedArray(img.data), img.width, img.height)?.data ?? null;
}

describe("MLS output", () => {
  it("downloads a staged photo labelled with a QR code that opens the original page; revoked, it answers 410", async () => {
    const user = await createUser({ credits: 2 });
    const call = api(user);
    const photoId = await upload(call, makeJpeg(900, 600, 88), "Living room.jpg");
    await stage(call, photoId);

    const ctx = await signedInContext(b, user, { acceptDownloads: true });
    const page = await b.newPage(ctx);
    await page.goto(`${baseUrl()}/dashboard`);
    await page.waitForSelector("html[data-hydrated=true]");
    await page.getByTestId("photo-open").first().focus();
    await page.keyboard.press("Enter");
    // The thumbnail opens the photo view; its "Versions and AI options" opens the photo's editor.
    await page.locator("[data-testid=photo-actions-desktop] [data-action=editor]").click();
    const quick = page.getByTestId("quick-dialog");
    const link = quick.getByTestId("download-labelled").first();
    await link.waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    // The browser runs as a shared server (test/e2e/global-setup.ts): a download is saved here, not read in place.
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const path = `${mkdtempSync(`${tmpdir()}/stagewise-mls-`)}/labelled.jpg`;
    await download.saveAs(path);
    const { readFile } = await import("node:fs/promises");
    const bytes = new Uint8Array(await readFile(path));
    expect(download.suggestedFilename()).toMatch(/labelled\)\.jpg$/);

    const url = qrOf(bytes);
    expect(url).toMatch(new RegExp(`^${baseUrl().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/o/[a-z2-7]{26}$`));
    // Same bytes on a second download (rendered once from the stored version).
    const again = (await call(
      "GET",
      new URL(link ? ((await link.getAttribute("href")) ?? "") : "", baseUrl()).pathname,
      undefined,
      true,
    )) as Response;
    expect(new Uint8Array(await again.arrayBuffer())).toEqual(bytes);

    const visitor = await b.newPage(await b.newContext());
    const res = await visitor.goto(url!);
    expect(res?.status()).toBe(200);
    expect(res?.headers()["cache-control"]).toContain("s-maxage=60");
    await expect.poll(() => visitor.getByTestId("disclosure").textContent()).toMatch(/virtually staged/);
    await visitor.getByTestId("compare-slider").waitFor();
    const loaded = await visitor.$$eval("img", (imgs) =>
      imgs.map((i) => ({
        src: i.getAttribute("src"),
        ok: (i as HTMLImageElement).complete && (i as HTMLImageElement).naturalWidth > 0,
      })),
    );
    expect(loaded.some((i) => i.src?.endsWith("/original"))).toBe(true);
    expect(loaded.some((i) => i.src?.endsWith("/staged"))).toBe(true);
    const imageSrc = `${baseUrl()}/api${new URL(url!).pathname}/original`;
    expect((await fetch(imageSrc)).status).toBe(200);
    // Nothing about the agent on the page.
    expect(await visitor.content()).not.toContain(user.email);

    // Revoke from the version list: the page and its images answer 410 at once.
    const controls = quick.getByTestId("original-link").first();
    await controls.getByRole("button", { name: "Original page link" }).click();
    await expect.poll(() => controls.getByTestId("original-link-url").textContent()).toBe(url);
    await controls.getByRole("button", { name: "Revoke link" }).click();
    await controls.getByText("Link revoked").waitFor();
    const after = await visitor.goto(url!);
    expect(after?.status()).toBe(410);
    await visitor.getByTestId("original-gone").waitFor();
    expect((await fetch(imageSrc)).status).toBe(410);
    await ctx.close();
  });

  it("downloads a folder of 5 staged photos as one pack: manifest pairs 5 originals, 5 labelled versions, 5 links; originals byte-identical", async () => {
    const user = await createUser({ credits: 5 });
    const call = api(user);
    const uploads: { id: string; bytes: Uint8Array }[] = [];
    for (let i = 0; i < 5; i++) {
      const bytes = makeJpeg(640, 480, 85, 24, i + 7);
      uploads.push({ id: await upload(call, bytes, `Room ${i + 1}.jpg`), bytes });
    }
    for (const u of uploads) await stage(call, u.id);

    const form = (fields: Record<string, string>) => new URLSearchParams(fields);
    await call("POST", "/dashboard", form({ intent: "create-folder", name: "12 Maple St" }), true);
    const html = await ((await call("GET", "/dashboard", undefined, true)) as Response).text();
    const folderId = /folder=([a-z2-7]+)/.exec(html)?.[1];
    expect(folderId).toBeTruthy();
    for (const u of uploads) {
      const moved = (await call(
        "POST",
        "/dashboard",
        form({ intent: "move", photoId: u.id, folderId: folderId! }),
        true,
      )) as Response;
      expect(moved.status).toBeLessThan(400);
    }
    const listing = (await call("PUT", `/api/folders/${folderId}/listing`, {
      address: "12 Maple St, Springfield",
      mlsNumber: "ML-81234",
    })) as {
      status: number;
    };
    expect(listing.status).toBe(200);

    const res = (await call("GET", `/api/folders/${folderId}/pack`, undefined, true)) as Response;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const manifest = JSON.parse(new TextDecoder().decode(files["manifest.json"])) as {
      listing: { address: string; mlsNumber: string };
      photos: { photo: string; original: string; staged: string; originalPage: string; done: string; style: string }[];
    };
    expect(manifest.listing).toMatchObject({ address: "12 Maple St, Springfield", mlsNumber: "ML-81234" });
    expect(manifest.photos).toHaveLength(5);
    const csv = new TextDecoder().decode(files["manifest.csv"]).trim().split("\r\n");
    expect(csv).toHaveLength(6);
    const links = new Set(manifest.photos.map((p) => p.originalPage));
    expect(links.size).toBe(5);
    for (const [i, p] of manifest.photos.entries()) {
      expect(p.done).toBe("Virtual staging");
      const original = files[p.original];
      const staged = files[p.staged];
      expect(original, p.original).toBeDefined();
      expect(staged, p.staged).toBeDefined();
      // Pixel check: the original is the upload, byte for byte.
      expect(Buffer.from(original!).equals(Buffer.from(uploads[i]!.bytes))).toBe(true);
      // The staged version carries the label and its QR points at this photo's original page.
      expect(qrOf(staged!)).toBe(p.originalPage);
      const page = await fetch(p.originalPage);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("12 Maple St, Springfield");
    }
    expect(Object.keys(files).filter((n) => n.startsWith("originals/"))).toHaveLength(5);
    expect(Object.keys(files).filter((n) => n.startsWith("staged/"))).toHaveLength(5);
  });

  it("saves label defaults on /settings, and deletes the account after the password is typed again", async () => {
    const password = "mls-delete-me-1";
    const user = await createUser({ credits: 1, password });
    const ctx = await signedInContext(b, user);
    const page = await b.newPage(ctx);
    await page.goto(`${baseUrl()}/settings`);
    await page.waitForSelector("html[data-hydrated=true]");
    const label = page.getByTestId("label-form");
    await label.getByLabel("Text", { exact: true }).fill("Digitally staged");
    await label.getByLabel("Corner").selectOption({ label: "Top left" });
    await label.getByRole("button", { name: "Save label" }).click();
    await page.getByText("Label saved.").waitFor();
    await page.reload();
    expect(await page.getByTestId("label-form").getByLabel("Text", { exact: true }).inputValue()).toBe(
      "Digitally staged",
    );

    const del = page.getByTestId("delete-account-form");
    await del.getByLabel("Your password").fill("not my password");
    await del.getByRole("button", { name: "Delete my account" }).click();
    await page.getByText("The password is not correct.").first().waitFor();
    await del.getByLabel("Your password").fill(password);
    await del.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(/\/\?deleted=1$/);
    // Signed out everywhere: the old session cookie no longer opens the dashboard.
    const old = await fetch(`${baseUrl()}/dashboard`, {
      headers: { Cookie: `sw_session=${user.sessionToken}` },
      redirect: "manual",
    });
    expect(old.status).toBe(302);
    await ctx.close();
  });
});
