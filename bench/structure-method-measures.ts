// Method work on the structure check (issue 43, docs/decisions/0300-facade-lines-for-sky.md): every candidate
// geometry measure that was measured on the real pairs' calibration half, beside the one production runs
// (workers/lib/structure/geometry.ts). Not shipped: bench/structure-method.ts prints their AUCs.
import type { Gradients, Gray, Plane } from "../workers/lib/structure/analysis.ts";
import { quantile } from "../workers/lib/structure/analysis.ts";
import { boxBlur, facadeLines, orientationField, type Prepared, prepare } from "../workers/lib/structure/geometry.ts";
import { detectSegments, type Segment, support } from "../workers/lib/structure/lines.ts";
import type { ResultKind } from "../workers/lib/structure/measures.ts";

/**
 * Structure-tensor agreement at radius r: per pixel, the cosine between the two pictures' dominant double-angle
 * orientation, weighted by the source's coherent energy (its lines), and separately by the result's. Relighting and
 * tone changes leave orientation alone.
 */
function tensorAgreement(p: Prepared, r: number, rowFrom: number, rowTo: number) {
  const { w, h, gS, gR, compared } = p;
  const A = orientationField(gS, w, h, r, compared);
  const B = orientationField(gR, w, h, r, compared);
  let num = 0;
  let den = 0;
  let numR = 0;
  let denR = 0;
  for (let y = Math.max(0, Math.floor(rowFrom * h)); y < Math.min(h, Math.ceil(rowTo * h)); y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!compared[i]) continue;
      const ma = Math.hypot(A.C[i]!, A.S[i]!);
      const mb = Math.hypot(B.C[i]!, B.S[i]!);
      if (ma <= 1e-6 || mb <= 1e-6) {
        den += ma;
        denR += mb;
        continue;
      }
      const cos = (A.C[i]! * B.C[i]! + A.S[i]! * B.S[i]!) / (ma * mb);
      // Weighted by coherent energy, but saturated so a few strong edges do not decide alone.
      const wa = Math.sqrt(ma);
      const wb = Math.sqrt(mb);
      num += wa * cos;
      den += wa;
      numR += wb * cos;
      denR += wb;
    }
  }
  return { src: den ? 1 - num / den : 0, res: denR ? 1 - numR / denR : 0 };
}

function lineSet(p: Prepared, minShare: number) {
  const { w, h, gS, gR, compared } = p;
  const tS = Math.max(3, 0.15 * quantile(gS.mag, compared, 0.95));
  const tR = Math.max(3, 0.15 * quantile(gR.mag, compared, 0.95));
  const minLength = minShare * Math.hypot(w, h);
  return {
    tS,
    tR,
    s: detectSegments(gS, w, h, tS, minLength, compared),
    r: detectSegments(gR, w, h, tR, minLength, compared),
  };
}

const isVertical = (s: Segment) => Math.abs(s.angle - Math.PI / 2) < Math.PI / 12;

/** Length-weighted share of `segs` with no support in `g`, optionally weighted by a row weight. */
function unsupported(
  segs: Segment[],
  g: Gradients,
  p: Prepared,
  t: number,
  radius: number,
  pick: (s: Segment) => number,
) {
  let tot = 0;
  let lost = 0;
  for (const s of segs) {
    const wgt = pick(s) * s.length;
    if (wgt <= 0) continue;
    const f = support(s, g, p.w, p.h, 0.5 * t, radius, p.compared);
    tot += wgt;
    lost += wgt * (1 - f.share);
  }
  return { tot, lost };
}

/** Angle histogram (18 bins of 10 degrees) of long lines, length-weighted, normalised. */
function angleHist(segs: Segment[]) {
  const hst = new Float64Array(18);
  let t = 0;
  for (const s of segs) {
    hst[Math.min(17, Math.floor((s.angle / Math.PI) * 18))]! += s.length;
    t += s.length;
  }
  if (t) for (let k = 0; k < 18; k++) hst[k]! /= t;
  return hst;
}

function hellinger(a: Float64Array, b: Float64Array) {
  let bc = 0;
  for (let k = 0; k < a.length; k++) bc += Math.sqrt(a[k]! * b[k]!);
  return Math.sqrt(Math.max(0, 1 - bc));
}

function sourceLines(p: Prepared, r: number, rowTo: number) {
  const f = facadeLines(p, r, rowTo);
  const cells = [...f.cells.values].filter((v) => v >= 0).sort((a, b) => a - b);
  return { mean: f.mean, cellsOver: f.value, p90: cells.length ? cells[Math.floor(0.9 * (cells.length - 1))]! : 0 };
}

/**
 * An opening added or closed: the share of the picture that is bright in one picture (its brightest 8 %, by its own
 * tones, blurred at radius 3) and dark in the other (below its own median), both ways.
 */
function openings(p: Prepared) {
  const { w, h, compared } = p;
  const a = boxBlur(p.src, 3).data;
  const b = boxBlur(p.res, 3).data;
  const cut = (d: Float32Array, q: number) => {
    const v: number[] = [];
    for (let i = 0; i < d.length; i++) if (compared[i]) v.push(d[i]!);
    v.sort((x, y) => x - y);
    return v.length ? v[Math.floor(q * (v.length - 1))]! : 0;
  };
  const ab = cut(a, 0.92);
  const am = cut(a, 0.5);
  const bb = cut(b, 0.92);
  const bm = cut(b, 0.5);
  let added = 0;
  let closed = 0;
  let n = 0;
  for (let i = 0; i < w * h; i++) {
    if (!compared[i]) continue;
    n++;
    if (b[i]! >= bb && a[i]! < am) added++;
    if (a[i]! >= ab && b[i]! < bm) closed++;
  }
  return { added: n ? added / n : 0, closed: n ? closed / n : 0 };
}

/** Every candidate geometry measure (0 = kept); names are the ADR's. */
export function geometryMeasures(source: Gray, result: Gray, kind: ResultKind): Record<string, number> {
  const p = prepare(source, result, kind);
  const out: Record<string, number> = {};
  for (const r of [2, 4, 8]) {
    const all = tensorAgreement(p, r, 0, 1);
    const up = tensorAgreement(p, r, 0, 0.55);
    out[`tensor${r}`] = all.src;
    out[`tensor${r}R`] = all.res;
    out[`tensor${r}Sym`] = (all.src + all.res) / 2;
    out[`tensorUp${r}`] = up.src;
    out[`tensorUp${r}Sym`] = (up.src + up.res) / 2;
  }
  const L = lineSet(p, 0.1);
  const upper = (s: Segment) => (Math.min(s.y1, s.y2) < 0.55 * p.h ? 1 : 0);
  const upW = (s: Segment) => 1 - Math.min(1, (s.y1 + s.y2) / 2 / p.h) ** 2;
  for (const rad of [2, 4]) {
    const lost = unsupported(L.s, p.gR, p, L.tR, rad, () => 1);
    const added = unsupported(L.r, p.gS, p, L.tS, rad, () => 1);
    const lostUp = unsupported(L.s, p.gR, p, L.tR, rad, upper);
    const addedUp = unsupported(L.r, p.gS, p, L.tS, rad, upper);
    const lostV = unsupported(L.s, p.gR, p, L.tR, rad, (s) => (isVertical(s) ? 1 : 0));
    const addedV = unsupported(L.r, p.gS, p, L.tS, rad, (s) => (isVertical(s) ? 1 : 0));
    const lostW = unsupported(L.s, p.gR, p, L.tR, rad, upW);
    const addedW = unsupported(L.r, p.gS, p, L.tS, rad, upW);
    const sh = (x: { tot: number; lost: number }) => (x.tot ? x.lost / x.tot : 0);
    out[`lines${rad}`] = (lost.lost + added.lost) / Math.max(1, lost.tot + added.tot);
    out[`lost${rad}`] = sh(lost);
    out[`linesUp${rad}`] = (lostUp.lost + addedUp.lost) / Math.max(1, lostUp.tot + addedUp.tot);
    out[`linesV${rad}`] = (lostV.lost + addedV.lost) / Math.max(1, lostV.tot + addedV.tot);
    out[`linesW${rad}`] = (lostW.lost + addedW.lost) / Math.max(1, lostW.tot + addedW.tot);
    out[`lostUp${rad}`] = sh(lostUp);
    out[`lostV${rad}`] = sh(lostV);
  }
  for (const r of [4, 8]) {
    const sl = sourceLines(p, r, 1);
    const su = sourceLines(p, r, 0.55);
    out[`srcLines${r}`] = sl.mean;
    out[`srcLinesCells${r}`] = sl.cellsOver;
    out[`srcLinesP90_${r}`] = sl.p90;
    out[`srcLinesUp${r}`] = su.mean;
  }
  const op = openings(p);
  out.openAdded = op.added;
  out.openClosed = op.closed;
  out.openBoth = op.added + op.closed;
  out.angles = hellinger(angleHist(L.s), angleHist(L.r));
  out.scale = p.scale;
  return out;
}
