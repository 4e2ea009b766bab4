import { env } from "cloudflare:workers";
import { photoVersions, teamMembers } from "@db/schema";
import { db } from "@test/support/factories";
import { onPlan } from "@test/support/listing";
import { type ProviderStub, stubProvider } from "@test/support/provider-stub";
import { stagedTeamJob } from "@test/support/team-jobs";
import { workerFetch } from "@test/support/worker";
import { storeMap } from "@workers/checker/judge";
import { deletePhotoForever, trashPhoto } from "@workers/services/library";
import { and, eq } from "drizzle-orm";
import { beforeEach, describe, expect, it } from "vitest";

// The structure check's change map of a team job (docs/decisions/0260-change-map-with-the-version.md, 0298): stored
// beside the result under the team's prefix, as a personal job's is beside its result under the user's, and served to
// every active member who reaches the photo; a stranger and a removed member get the 404 of a missing version.

let provider: ProviderStub;
beforeEach(() => {
  provider = stubProvider();
});

function teamJob() {
  return stagedTeamJob(provider, { pool: 3, ownCredits: 0, answer: "passed" });
}

const mapOf = (cookie: string, photoId: string, versionId: string) =>
  workerFetch(`/api/photos/${photoId}/versions/${versionId}/changes`, { headers: { Cookie: cookie } });

describe("a team job's change map", () => {
  it("is stored beside the result under the team's prefix and served to every active member", async () => {
    const { teamId, member, mate, photo, versionId } = await teamJob();
    const version = await db.select().from(photoVersions).where(eq(photoVersions.id, versionId)).get();
    expect(version?.key.startsWith(`photos/team-${teamId}/`)).toBe(true);
    expect(version?.structureMapKey).toBe(version!.key.replace(/\.[a-z]+$/, ".changes.png"));
    expect(await env.PHOTOS.head(version!.structureMapKey!)).not.toBeNull();
    for (const who of [member, mate]) {
      const res = await mapOf(who.cookie, photo.id, versionId);
      expect(res.status).toBe(200);
      expect(res.headers.get("Content-Type")).toBe("image/png");
      await res.arrayBuffer();
    }
    // Deleted for good, the photo takes its team-prefixed result, thumbnail and change map with it.
    expect(await trashPhoto(db, member.id, photo.id)).toBe(true);
    expect(await deletePhotoForever(db, env.PHOTOS, member.id, photo.id)).toBe(true);
    for (const key of [version!.key, version!.thumbKey, version!.structureMapKey!])
      expect(await env.PHOTOS.head(key), key).toBeNull();
  });

  it("a stranger and a removed member get 404", async () => {
    const { teamId, mate, photo, versionId } = await teamJob();
    const stranger = await onPlan("Starter plan", 0);
    await db
      .update(teamMembers)
      .set({ removedAt: Date.now() })
      .where(and(eq(teamMembers.teamId, teamId), eq(teamMembers.userId, mate.id)));
    for (const who of [stranger, mate]) {
      const res = await mapOf(who.cookie, photo.id, versionId);
      expect(res.status).toBe(404);
      await res.arrayBuffer();
    }
  });

  it("the check Worker writes a team's map only under that team's prefix", async () => {
    const png = new Uint8Array([1, 2, 3]);
    const base = { checkId: "c", userId: "u1", kind: "stage" as const, sourceKey: "s", resultKey: "r" };
    const put = (mapKey: string, teamId?: string) =>
      storeMap(env, { ...base, mapKey, ...(teamId ? { teamId } : {}) }, png);
    expect(await put("photos/team-t1/p/versions/j.changes.png", "t1")).toBe(true);
    expect(await put("photos/team-t2/p/versions/j.changes.png", "t1")).toBe(false);
    expect(await put("photos/team-t1/p/versions/j.changes.png")).toBe(false);
    expect(await put("photos/team-t1/../u2/j.changes.png", "t1")).toBe(false);
    expect(await put("photos/u1/p/versions/j.changes.png", "t1")).toBe(true);
    await env.PHOTOS.delete(["photos/team-t1/p/versions/j.changes.png", "photos/u1/p/versions/j.changes.png"]);
  });
});
