import { env } from "cloudflare:workers";
import { db } from "@test/support/factories";
import { chunkedOversized, sendAs, stateNow } from "@test/support/hostile";
import { api, onPlan, photosOf } from "@test/support/listing";
import { stubProvider } from "@test/support/provider-stub";
import { makeTeam, teamFolder } from "@test/support/teams";
import { apiV1 } from "@test/support/worker";
import { STATUS } from "@workers/http/result";
import { createApiKey } from "@workers/services/api-keys";
import { batchForm } from "@workers/services/jobs/batch-pages";
import { readTeamRecord } from "@workers/services/teams/record";
import { readTeamSpend } from "@workers/services/teams/spend";
import { beforeEach, describe, expect, it } from "vitest";

// The routes the teams' last items touched (the library batch's payer, a teammate's batch page, a member's personal
// key on a team photo, the broker's record and spend exports), attacked by hand beside the generated suite (which
// sends the pages over HTTP in the e2e run): a stranger's real ids, hostile names in the payer and the range, wrong
// media types, a chunked oversized body, odd methods. Each is a 4xx (never a 5xx); D1 and R2 are as they were. The
// pages' loaders are thin (they call what is called here); workerd tests do not render React Router's pages.

beforeEach(() => {
  stubProvider();
});

/** Bob's team with a listing photo, and Alice, who is in no team; Alice holds a personal key. */
async function world() {
  const bob = await onPlan("Starter plan", 4);
  const team = await makeTeam(bob.id, { credits: 5, name: "Harbor Realty" });
  const listing = await teamFolder(team, bob.id);
  const [photo] = await photosOf(bob.id, 1, listing);
  const alice = await onPlan("Starter plan", 4);
  const [own] = await photosOf(alice.id, 1);
  const made = await createApiKey({ db, env, clock: () => Date.now() }, alice.id, { name: "crm", scopes: ["stage"] });
  if (!made.ok) throw new Error(made.error);
  return { bob, team, photo: photo!, alice, own: own!, key: made.token };
}

describe("the teams' touched routes under attack", () => {
  it("the library batch page and POST /api/batches: a stranger's team and hostile payer names are refused", async () => {
    const { team, alice, own } = await world();
    const before = await stateNow();
    for (const paidBy of [team, "https://evil.example/", "../../teams", "<script>x</script>", "own\r\nX: y"]) {
      // The page's loader reads the picker's choice through batchForm (routes/batches/new.tsx): null is its 404.
      expect(await batchForm(db, alice.id, null, paidBy), paidBy).toBeNull();
      const started = await api(alice.cookie, "POST", "/api/batches", {
        designStyle: "Modern",
        items: [{ photoId: own.id, roomType: "Bedroom" }],
        paidBy,
      });
      expect([400, 404], paidBy).toContain(started.status);
    }
    expect(await stateNow()).toEqual(before);
  });

  it("POST /api/batches: a wrong media type, a chunked oversized body and an odd method change nothing", async () => {
    const { alice } = await world();
    const before = await stateNow();
    const wrongType = await sendAs(alice.cookie, "/api/batches", {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "paidBy=own",
    });
    expect(wrongType.status).toBe(415);
    const oversized = await sendAs(alice.cookie, "/api/batches", chunkedOversized('{"paidBy":"'));
    expect(oversized.status).toBe(413);
    const odd = await sendAs(alice.cookie, "/api/batches", { method: "PUT" });
    expect([404, 405]).toContain(odd.status);
    expect(await stateNow()).toEqual(before);
  });

  it("the broker's record, its CSV and the spend CSV: a stranger's real team is a 404, a hostile range a 400", async () => {
    const { team, alice, bob } = await world();
    const before = await stateNow();
    // What the three pages' loaders call (routes/teams/record.tsx, record-csv.tsx, spend-csv.tsx).
    const q = (s: string) => new URLSearchParams(s);
    for (const csv of [true, false]) {
      const res = await readTeamRecord(db, team, alice.id, q("from=2026-01-01&to=2026-12-31"), {
        csv,
        now: Date.now(),
      });
      expect(res.ok ? 200 : STATUS[res.code]).toBe(404);
    }
    const spent = await readTeamSpend(db, team, alice.id, q("from=2026-01-01&to=2026-12-31"));
    expect(spent.ok ? 200 : STATUS[spent.code]).toBe(404);
    for (const range of ["from=2026-13-45", "from=2026-12-31&to=2026-01-01", "to=%0d%0aSet-Cookie:x", "from=1e9"]) {
      const res = await readTeamSpend(db, team, bob.id, q(range));
      expect(res.ok ? 200 : STATUS[res.code], range).toBe(400);
      const record = await readTeamRecord(db, team, bob.id, q(range), { csv: true, now: Date.now() });
      expect(record.ok ? 200 : STATUS[record.code], range).toBe(400);
    }
    expect(await stateNow()).toEqual(before);
  });

  it("the public API: a personal key on a stranger team's photo is the 404 of a made-up one; odd methods and types change nothing", async () => {
    const { photo, key } = await world();
    const before = await stateNow();
    const job = await apiV1(key, `/photos/${photo.id}/jobs`, {
      method: "POST",
      json: { kind: "stage", roomType: "Bedroom", designStyle: "Modern" },
    });
    expect(job.status).toBe(404);
    const made = await apiV1(key, "/photos/nope/jobs", {
      method: "POST",
      json: { kind: "stage", roomType: "Bedroom", designStyle: "Modern" },
    });
    expect(made.status).toBe(404);
    expect(await job.json()).toEqual(await made.json());
    const wrongType = await apiV1(key, `/photos/${photo.id}/jobs`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "kind=stage",
    });
    expect(wrongType.status).toBeGreaterThanOrEqual(400);
    expect(wrongType.status).toBeLessThan(500);
    const odd = await apiV1(key, `/photos/${photo.id}/jobs`, { method: "PATCH" });
    expect([404, 405]).toContain(odd.status);
    expect(await stateNow()).toEqual(before);
  });
});
