import { env } from "cloudflare:workers";
import { creditReservations, jobs, photoVersions, users } from "@db/schema";
import { makeJpeg } from "@test/fixtures/images";
import { db, signedIn } from "@test/support/factories";
import { makePhoto } from "@test/support/photos";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { workerFetch } from "@test/support/worker";
import { userObject } from "@workers/objects/client";
import { eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";
import { ADVANCED_REFUSED_MESSAGE } from "~/shared/staging-options";

// Advanced options by plan, and staging from a version: what reaches the
// provider (stubbed at the isolate's fetch for http://provider.test).

let provider: ProviderStub;
let answer = makeJpeg(64, 48, 80);

beforeEach(() => {
  answer = makeJpeg(64, 48, 80);
  provider = stubProvider();
  provider.answer = () => [answer];
});

async function post(cookie: string, photoId: string, body: unknown) {
  return workerFetch(`/api/photos/${photoId}/jobs`, {
    method: "POST",
    headers: { Cookie: cookie, "Content-Type": "application/json", Origin: "http://localhost" },
    body: JSON.stringify(body),
  });
}

async function settle(cookie: string, jobId: string) {
  for (let i = 0; i < 400; i++) {
    const body = (await (await workerFetch(`/api/jobs/${jobId}`, { headers: { Cookie: cookie } })).json()) as {
      job: { status: string; versionId: string | null };
    };
    if (body.job.status === "succeeded" || body.job.status === "failed") return body.job;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the job did not settle");
}

async function onPlan(plan: string | null, credits: number) {
  const user = await signedIn({ credits });
  await db.update(users).set({ plan }).where(eq(users.id, user.id));
  return user;
}

const ADVANCED = {
  kind: "stage",
  roomType: "Living Room",
  designStyle: "Modern",
  colorScheme: "COLOR_SCHEME_6",
  specialityDecor: "SPECIALITY_DECOR_6",
  designCreativity: 0.15,
  prompt: "  Add a reading chair by the window  ",
};

describe("advanced options", () => {
  it("a Small-plan user asking for them gets 403 with a clear message and no reservation", async () => {
    const user = await onPlan("Small plan", 2);
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, ADVANCED);
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: string }).error).toBe(ADVANCED_REFUSED_MESSAGE);
    expect(await userObject(env, user.id).balance(user.id)).toBe(2);
    expect(await db.select().from(jobs).where(eq(jobs.userId, user.id)).all()).toEqual([]);
    expect(await db.select().from(creditReservations).where(eq(creditReservations.userId, user.id)).all()).toEqual([]);
    expect(provider.calls).toEqual([]);
  });

  it("trial users (no plan) are refused too; the default palette and no decor ask for nothing extra", async () => {
    const user = await onPlan(null, 2);
    const photo = await makePhoto(user.id);
    expect((await post(user.cookie, photo.id, { ...ADVANCED, prompt: undefined, colorScheme: undefined })).status).toBe(
      403,
    );
    const plain = await post(user.cookie, photo.id, {
      kind: "stage",
      roomType: "Bedroom",
      designStyle: "Modern",
      colorScheme: "COLOR_SCHEME_0",
      specialityDecor: "SPECIALITY_DECOR_0",
      keepOriginalFloor: false,
    });
    expect(plain.status).toBe(202);
    const { job } = (await plain.json()) as { job: { id: string } };
    expect((await settle(user.cookie, job.id)).status).toBe("succeeded");
    expect(provider.calls[0]!.body).not.toHaveProperty("color_scheme");
    expect(provider.calls[0]!.body).not.toHaveProperty("keep_original_floor");
    expect(provider.calls[0]!.body).not.toHaveProperty("design_creativity");
  });

  it("a Starter user's options reach the provider; the deprecated keepOriginalFloor is accepted and not sent", async () => {
    const user = await onPlan("Starter plan", 2);
    const photo = await makePhoto(user.id);
    const res = await post(user.cookie, photo.id, { ...ADVANCED, keepOriginalFloor: true });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: { id: string } };
    expect((await settle(user.cookie, job.id)).status).toBe("succeeded");
    expect(provider.calls[0]!.body).toMatchObject({
      room_type: "livingroom",
      design_style: "modern",
      color_scheme: "COLOR_SCHEME_6",
      speciality_decor: "SPECIALITY_DECOR_6",
      design_creativity: 0.15,
      // The instruction is the provider's whole directive, so it names the room and style itself.
      prompt:
        "A living room furnished in Modern style, real estate listing photo, walls, windows, doors and floor unchanged. Add a reading chair by the window",
    });
    expect(provider.calls[0]!.body).not.toHaveProperty("keep_original_floor");
    expect(await userObject(env, user.id).balance(user.id)).toBe(1);
  });

  it("refuses unknown codes, long or control-character instructions with 400 and reserves nothing", async () => {
    const user = await onPlan("Professional plan", 2);
    const photo = await makePhoto(user.id);
    for (const bad of [
      { colorScheme: "COLOR_SCHEME_21" },
      { specialityDecor: "halloween" },
      { prompt: "x".repeat(301) },
      { prompt: "hi\u0007there" },
      { keepOriginalFloor: "yes" },
      { designCreativity: 1.5 },
      { designCreativity: "high" },
    ]) {
      const res = await post(user.cookie, photo.id, { ...ADVANCED, ...bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect(await userObject(env, user.id).balance(user.id)).toBe(2);
    expect(provider.calls).toEqual([]);
  });
});

describe("staging from a version", () => {
  it("stages the version it is given, not the original; a stranger's or unknown version is 404", async () => {
    const user = await signedIn({ credits: 3 });
    const photo = await makePhoto(user.id);
    answer = makeJpeg(80, 60, 40);
    const removal = (await (await post(user.cookie, photo.id, { kind: "removal" })).json()) as { job: { id: string } };
    const emptied = await settle(user.cookie, removal.job.id);
    expect(emptied.status).toBe("succeeded");

    answer = makeJpeg(64, 48, 80);
    const res = await post(user.cookie, photo.id, {
      kind: "stage",
      roomType: "Bedroom",
      designStyle: "Modern",
      sourceVersionId: emptied.versionId,
    });
    expect(res.status).toBe(202);
    const { job } = (await res.json()) as { job: { id: string } };
    expect((await settle(user.cookie, job.id)).status).toBe("succeeded");
    const stageCall = provider.calls.find((c) => c.path === "/generate_designs_for_room")!;
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, emptied.versionId!)).get();
    const stored = new Uint8Array(await (await env.PHOTOS.get(version!.key))!.arrayBuffer());
    expect(stageCall.input).toEqual(stored);
    const row = await db.select().from(jobs).where(eq(jobs.id, job.id)).get();
    expect(row?.params.source).toBe(emptied.versionId);

    const stranger = await signedIn({ credits: 1 });
    const theirs = await makePhoto(stranger.id);
    for (const sourceVersionId of [emptied.versionId, "nope"]) {
      const r = await post(stranger.cookie, theirs.id, {
        kind: "stage",
        roomType: "Bedroom",
        designStyle: "Modern",
        sourceVersionId,
      });
      expect(r.status).toBe(404);
    }
    expect(await userObject(env, stranger.id).balance(stranger.id)).toBe(1);
  });
});
