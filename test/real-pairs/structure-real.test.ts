import { env } from "cloudflare:workers";
import { parseManifest, type RealPair } from "@test/fixtures/structure-real/pairs";
import { images } from "@workers/lib/images";
import { analysisSize, checkStructure, toAnalysis } from "@workers/lib/structure/check";
import type { ResultKind } from "@workers/lib/structure/measures";
import { beforeAll, describe, expect, it } from "vitest";
import { counted, fromPair, kindRates, type ScoredPair, splitByGroup } from "./evaluate.ts";

// Issue 43: the structure check judged on real AI results (test/fixtures/structure-real/README.md). Each picture is
// reduced by the Images binding's stand-in to 640 px, as the check Worker does (workers/checker/judge.ts), and also by
// an exact area average (served by the PAIRS binding), to show no verdict depends on one resampler.

const REDUCED_EDGE = 640;
const KINDS: ResultKind[] = ["stage", "removal", "sky"];

async function bytes(name: string): Promise<Uint8Array> {
  const res = await env.PAIRS.fetch(`http://pairs/images/${name}`);
  if (!res.ok) throw new Error(`${name}: ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

async function areaGray(name: string) {
  const res = await env.PAIRS.fetch(`http://pairs/area/${name}`);
  return {
    width: Number(res.headers.get("x-width")),
    height: Number(res.headers.get("x-height")),
    data: new Uint8Array(await res.arrayBuffer()),
  };
}

function score(kind: ResultKind, src: { width: number; height: number; data: Uint8Array }, res: typeof src) {
  const size = analysisSize(src.width, src.height);
  return checkStructure(
    toAnalysis(src.data, src.width, src.height, size),
    toAnalysis(res.data, res.width, res.height, size),
    { kind },
  ).score;
}

let pairs: RealPair[] = [];
const scored: ScoredPair[] = [];

beforeAll(async () => {
  pairs = parseManifest(await (await env.PAIRS.fetch("http://pairs/manifest")).json());
  const service = images(env.IMAGES, { local: true });
  for (const p of pairs) {
    const [s, r] = await Promise.all([bytes(`${p.id}.source.jpg`), bytes(`${p.id}.result.jpg`)]);
    const [gs, gr] = await Promise.all([service.analysisGray(s, REDUCED_EDGE), service.analysisGray(r, REDUCED_EDGE)]);
    const [as, ar] = await Promise.all([areaGray(`${p.id}.source.jpg`), areaGray(`${p.id}.result.jpg`)]);
    scored.push(fromPair(p, score(p.kind, gs, gr), score(p.kind, as, ar)));
  }
});

describe("the structure check on real pairs", () => {
  it("has every pair judged through the Images binding, from more than one group per kind", () => {
    expect(scored.length).toBe(pairs.length);
    for (const kind of KINDS) {
      const groups = new Set(
        counted(scored)
          .filter((r) => r.kind === kind)
          .map((r) => r.group),
      );
      expect(groups.size, kind).toBeGreaterThan(1);
    }
  });

  it("gives the same verdicts whichever resampler reduced the pictures", () => {
    const rows = KINDS.map((kind) => kindRates(scored, kind));
    const differ = scored.filter((r) => {
      const mark = rows.find((k) => k.kind === r.kind)!.mark;
      return r.score > mark !== (r.scoreArea ?? Number.NaN) > mark;
    });
    expect(differ.map((r) => `${r.id} ${r.score.toFixed(3)} / ${r.scoreArea?.toFixed(3)}`)).toEqual([]);
  });

  it("writes the held-out rates for the report", async () => {
    const report = {
      pairs: scored.length,
      kinds: KINDS.map((kind) => kindRates(scored, kind)),
      scored: scored.map((r) => ({ ...r, half: splitByGroup(counted(scored)).get(r.group) ?? "unsure only" })),
    };
    const res = await env.PAIRS.fetch("http://pairs/report", { method: "POST", body: JSON.stringify(report) });
    expect(res.ok).toBe(true);
  });
});
