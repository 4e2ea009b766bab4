import { jobs } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { makePhoto, makePhotoRows } from "@test/support/photos";
import { randomToken } from "@workers/lib/crypto";
import { createFolder, movePhoto, trashPhoto } from "@workers/services/library";
import { photoView } from "@workers/services/photo-view";
import { computeSiteFigures, FIGURES_WINDOW_MS } from "@workers/services/site-figures";
import { describe, expect, it } from "vitest";

// The photo view's reads (its neighbours are the grid's, in the view it was opened from) and the landing page's
// measured figures (docs/decisions/0185-measured-landing-figures.md, 0186-photo-view.md).

describe("the photo view's reads", () => {
  it("steps through the view newest first, and another user's photo is not found", async () => {
    const { id } = await makeUser();
    const rows = await makePhotoRows(id, 4, (i) => 1000 + i); // rows[3] is the newest
    const [oldest, , second, newest] = rows;
    const top = await photoView(db, id, newest!.id, { kind: "all" });
    expect(top).toMatchObject({ previous: null, next: second!.id });
    const bottom = await photoView(db, id, oldest!.id, { kind: "all" });
    expect(bottom?.next).toBeNull();
    // A folder view steps through that folder only.
    const folder = await createFolder(db, id, "Kitchen");
    await movePhoto(db, id, newest!.id, folder.id);
    await movePhoto(db, id, oldest!.id, folder.id);
    expect(await photoView(db, id, newest!.id, { kind: "folder", folderId: folder.id })).toMatchObject({
      previous: null,
      next: oldest!.id,
    });
    // The trash is its own view.
    await trashPhoto(db, id, second!.id);
    expect(await photoView(db, id, second!.id, { kind: "trash" })).toMatchObject({
      previous: null,
      next: null,
      photo: { trashed: true },
    });

    const stranger = await makeUser();
    expect(await photoView(db, stranger.id, newest!.id, { kind: "all" })).toBeNull();
    expect(await photoView(db, id, "not an id", { kind: "all" })).toBeNull();
  });
});

async function finishedJobs(userId: string, photoId: string, now: number, list: [string, number][]) {
  for (const [status, ms] of list) {
    await db.insert(jobs).values({
      id: randomToken(),
      userId,
      photoId,
      kind: "stage",
      params: {},
      status: status as "succeeded" | "failed",
      createdAt: now - ms - 1000,
      startedAt: now - ms - 1000,
      finishedAt: now - 1000,
    });
  }
}

describe("the landing page's figures", () => {
  it("are the share delivered and the median over the last 30 days, and none below 50 jobs", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id);
    const now = 10_000_000_000_000;
    await finishedJobs(id, photo.id, now, [
      ...Array.from({ length: 46 }, (_, i): [string, number] => ["succeeded", 20_000 + i * 1000]),
      ["failed", 3000],
      ["failed", 120_000],
    ]);
    // 48 jobs: too few to show anything.
    expect(await computeSiteFigures(db, now)).toMatchObject({ jobs: 48, successPercent: null, median: null });
    // A job refused before any call never started: not counted. One still running: not counted.
    await db.insert(jobs).values([
      { id: randomToken(), userId: id, photoId: photo.id, kind: "stage", params: {}, status: "failed", createdAt: now },
      {
        ...{ id: randomToken(), userId: id, photoId: photo.id, kind: "stage", params: {}, status: "running" },
        ...{ createdAt: now - 5000, startedAt: now - 5000 },
      },
    ]);
    // One from before the window: not counted either.
    await finishedJobs(id, photo.id, now - FIGURES_WINDOW_MS - 10_000, [["failed", 1000]]);
    expect((await computeSiteFigures(db, now)).jobs).toBe(48);
    // Two more delivered (48 delivered of 50, an even count: the median is the mean of the middle two).
    await finishedJobs(id, photo.id, now, [
      ["succeeded", 100_000],
      ["succeeded", 100_000],
    ]);
    const figures = await computeSiteFigures(db, now);
    // Durations 20..65 s and 100 s twice: the 24th and 25th are 43 s and 44 s.
    expect(figures).toMatchObject({ jobs: 50, successPercent: 96, medianMs: 43_500, median: "44s" });
  });

  it("round the success rate down, never up", async () => {
    const { id } = await makeUser();
    const photo = await makePhoto(id);
    const now = 20_000_000_000_000;
    await finishedJobs(id, photo.id, now, [
      ...Array.from({ length: 199 }, (): [string, number] => ["succeeded", 30_000]),
      ["failed", 30_000],
    ]);
    expect(await computeSiteFigures(db, now)).toMatchObject({ jobs: 200, successPercent: 99, median: "30s" });
  });
});
