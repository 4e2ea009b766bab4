import { unzipSync } from "fflate";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { baseUrl, createUser, type FixtureUser } from "../browser.ts";
import { providerRequests, setProviderMode } from "../provider-emulator.ts";
import { refuseOverOne } from "../structure-limits.ts";
import { seedPhotos } from "../support/library-bytes.ts";
import { expectRefusedWithoutChange, type HostileCase, waitForQuietState } from "./harness.ts";

// The holes a hostile run found in paid work (issue 45, parts 1-3; docs/decisions/0200, 0201, 0202), tried against
// the production build and the provider emulator, whose "drift" mode makes every staging result one the structure
// check refuses: a re-roll loop after the free re-roll was refused, the data export after refusals, and every paid
// action on a photo in the trash. Every answer is a 4xx (never a 5xx) and, for each refused request, nothing stored
// changes (D1 and R2 digests).

const REROLL_PAID = /This re-roll costs 1 credit/;
const IN_TRASH = /is in the trash/;
const SUBJECT = "Your Stagewise data export is ready";

let owner: FixtureUser;
let ran = 0;
const f = { photoId: "", otherPhotoId: "", jobId: "", rerollJobId: "", refused: [] as string[], passed: "" };

const headers = () => ({ Cookie: `sw_session=${owner.sessionToken}`, Origin: baseUrl() });

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl()}${path}`, {
    method,
    headers: { ...headers(), ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text.startsWith("{") ? JSON.parse(text) : {}, text };
}

/** The job once it has ended (the drift mode's refusals take two provider calls). */
async function ended(jobId: string): Promise<{ status: string; versionId: string | null }> {
  for (let i = 0; i < 240; i++) {
    const r = await call("GET", `/api/jobs/${jobId}?wait=5`);
    if (r.body.job.status === "succeeded" || r.body.job.status === "failed") return r.body.job;
  }
  throw new Error(`job ${jobId} did not end`);
}

const stage = (photoId: string) =>
  call("POST", `/api/photos/${photoId}/jobs`, { kind: "stage", roomType: "livingroom", designStyle: "modern" });

async function stagingCalls(): Promise<number> {
  return (await providerRequests()).filter((c) => c.path === "/generate_designs_for_room").length;
}

beforeAll(async () => {
  await setProviderMode("ok");
  owner = await createUser({ credits: 4, apiKey: true });
  // Production's limits refuse nothing (ADR 0215); these refuse what the drift mode makes.
  await refuseOverOne(owner.id);
  const seeded = await seedPhotos({ baseUrl: baseUrl(), sessionToken: owner.sessionToken! }, 2, "Den");
  f.photoId = seeded[0]!;
  f.otherPhotoId = seeded[1]!;
  const staged = await stage(f.photoId);
  f.jobId = staged.body.job.id;
  const ok = await ended(f.jobId);
  expect(ok.status).toBe("succeeded");
  f.passed = ok.versionId!;
  // The provider changes the room from now on: the free re-roll is refused, and so is another staging.
  await setProviderMode("drift");
  const free = await call("POST", `/api/jobs/${f.jobId}/reroll`, {});
  expect([free.status, free.body.cost]).toEqual([202, 0]);
  f.rerollJobId = free.body.job.id;
  const another = await stage(f.photoId);
  for (const id of [f.rerollJobId, another.body.job.id]) {
    const job = await ended(id);
    expect(job.status).toBe("failed");
    f.refused.push(job.versionId!);
  }
  await setProviderMode("ok");
  // Staged once: 3 of 4 credits left; the refusals were not charged.
  expect((await call("GET", "/api/me")).body.credits).toBe(3);
  await waitForQuietState();
}, 240_000);

afterAll(async () => {
  await setProviderMode("ok");
  console.log(`hostile-input suite (paid holes): ${ran} cases ran`);
});

describe("the free re-roll, once", () => {
  it("refused by the structure check, the free re-roll was the one: a loop of re-rolls asks for a credit and changes nothing", async () => {
    const quote = await call("GET", `/api/jobs/${f.jobId}/reroll`);
    expect(quote.body.quote.cost).toBe(1);
    const calls = await stagingCalls();
    for (let i = 0; i < 5; i++) {
      await expectRefusedWithoutChange({
        name: `re-roll ${i + 1} after the free one was refused`,
        method: "POST",
        path: `/api/jobs/${f.jobId}/reroll`,
        headers: headers(),
        body: {},
        status: 409,
        message: REROLL_PAID,
      });
      ran++;
    }
    expect(await stagingCalls()).toBe(calls);
    expect((await call("GET", "/api/me")).body.credits).toBe(3);
  });
});

describe("the data export after refusals", () => {
  it("holds each refused result's preview, never its image, and says so in its README", {
    timeout: 120_000,
  }, async () => {
    const asked = await call("POST", "/api/account/export", {});
    expect(asked.status).toBe(202);
    const mails = `http://127.0.0.1:${inject("ports").mail}/_emulator/emails?to=${encodeURIComponent(owner.email)}`;
    let link = "";
    for (let i = 0; i < 300 && !link; i++) {
      const list = (await (await fetch(mails)).json()) as { subject: string; text: string }[];
      link = /https?:\/\/\S+\/api\/exports\/\S+/.exec(list.find((m) => m.subject === SUBJECT)?.text ?? "")?.[0] ?? "";
      if (!link) await new Promise((r) => setTimeout(r, 200));
    }
    const res = await fetch(link);
    expect([res.status, res.headers.get("Content-Type")]).toEqual([200, "application/zip"]);
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const versions = (await call("GET", `/api/photos/${f.photoId}/versions`)).body.versions as {
      id: string;
      width: number;
      structure: { verdict: string } | null;
    }[];
    const dir = `photos/${f.photoId}/versions`;
    const full = versions.find((v) => v.id === f.passed)!;
    expect(jpegWidth(files[`${dir}/${f.passed}-stage.jpg`]!)).toBe(full.width);
    const readme = new TextDecoder().decode(files["README.txt"]);
    for (const id of f.refused) {
      expect(versions.find((v) => v.id === id)?.structure?.verdict).toBe("refused");
      expect(Object.keys(files)).not.toContain(`${dir}/${id}-stage.jpg`);
      const preview = files[`${dir}/${id}-stage-refused-preview.jpg`];
      expect(preview, `the preview of ${id}`).toBeDefined();
      expect(jpegWidth(preview!)).toBeLessThan(full.width / 4);
      expect(readme).toContain(`${dir}/${id}-stage-refused-preview.jpg: the preview only.`);
    }
    // No image in the export is a refused result at full size (2304 px wide).
    const wide = Object.entries(files).filter(([name, b]) => name.includes("refused") && jpegWidth(b) >= full.width);
    expect(wide.map(([name]) => name)).toEqual([]);
    await waitForQuietState();
  });
});

describe("a photo in the trash", () => {
  it("refuses every paid action with a clear message, never a 5xx, and nothing stored changes", {
    timeout: 300_000,
  }, async () => {
    const trashed = await fetch(`${baseUrl()}/dashboard`, {
      method: "POST",
      redirect: "manual",
      headers: { ...headers(), "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "trash", photoId: f.photoId }).toString(),
    });
    expect(trashed.status).toBeLessThan(400);
    const view = await call("GET", "/api/photos?view=trash");
    expect(view.text).toContain(f.photoId);
    await waitForQuietState();
    const p = `/api/photos/${f.photoId}`;
    const s = { kind: "stage", roomType: "livingroom", designStyle: "modern" };
    const bearer = { Authorization: `Bearer ${owner.apiKey}`, "Content-Type": "application/json" };
    const form = (fields: Record<string, string>) => {
      const body = new URLSearchParams(fields).toString();
      return { headers: { ...headers(), "Content-Type": "application/x-www-form-urlencoded" }, body };
    };
    const post = (name: string, path: string, body: unknown, extra: Partial<HostileCase> = {}): HostileCase => ({
      name,
      method: "POST",
      path,
      headers: headers(),
      body: body as HostileCase["body"],
      status: 409,
      message: IN_TRASH,
      ...extra,
    });
    const cases: HostileCase[] = [
      post("keep it anyway", `${p}/versions/${f.refused[0]}/keep`, {}),
      post("stage", `${p}/jobs`, s),
      post("variations", `${p}/jobs`, { ...s, variations: 2 }),
      post("stage from a version", `${p}/jobs`, { ...s, sourceVersionId: f.passed }),
      post("remove the furniture", `${p}/jobs`, { kind: "removal" }),
      post("replace the sky", `${p}/jobs`, { kind: "sky", skyType: "dusk" }),
      // Its free re-roll is used: without consent the price is said first (nothing is written either way).
      post("re-roll", `/api/jobs/${f.jobId}/reroll`, {}, { message: REROLL_PAID }),
      post("re-roll, agreeing to a credit", `/api/jobs/${f.jobId}/reroll`, { acceptCharge: true }),
      post("a batch with it and a live photo", "/api/batches", {
        designStyle: "modern",
        items: [
          { photoId: f.otherPhotoId, roomType: "bedroom" },
          { photoId: f.photoId, roomType: "livingroom" },
        ],
      }),
      post("the public API's job", `/api/v1/photos/${f.photoId}/jobs`, s, { headers: bearer }),
      post("the public API's removal", `/api/v1/photos/${f.photoId}/jobs`, { kind: "removal" }, { headers: bearer }),
      {
        name: "the new-batch form with it picked",
        method: "POST",
        path: "/batches/new",
        ...form({
          designStyle: "modern",
          quoted: "1",
          [`pick:${f.photoId}`]: "1",
          [`room:${f.photoId}`]: "livingroom",
        }),
        status: 409,
        message: IN_TRASH,
      },
    ];
    for (const c of cases) {
      await expectRefusedWithoutChange(c);
      ran++;
    }
    expect((await call("GET", "/api/me")).body.credits).toBe(3);
  });
});

/** A JPEG's width from its frame header (no decoding). */
function jpegWidth(b: Uint8Array): number {
  for (let i = 2; i + 9 < b.length; ) {
    if (b[i] !== 0xff) return 0;
    const marker = b[i + 1]!;
    const length = (b[i + 2]! << 8) | b[i + 3]!;
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
      return (b[i + 7]! << 8) | b[i + 8]!;
    i += 2 + length;
  }
  return 0;
}
