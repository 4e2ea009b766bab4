// Method work on the structure check (issue 43, docs/decisions/0300-facade-lines-for-sky.md): every candidate
// geometry measure that was measured on the real pairs' calibration half, beside the one production runs
// (workers/lib/structure/geometry.ts). Not shipped: bench/structure-method.ts prints their AUCs.
import type { Gradients, Gray } from "../workers/lib/structure/analysis.ts";
import { quantile } from "../workers/lib/structure/analysis.ts";
import {
  boxBlur,
  facadeLines,
  orientationField,
  type Prepared,
  prepare,
  roomTensor,
} from "../workers/lib/structure/geometry.ts";
import { matchTones } from "../workers/lib/structure/helpers.ts";
import { detectSegments, type Segment, support } from "../workers/lib/structure/lines.ts";
import type { ResultKind } from "../workers/lib/structure/measures.ts";

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

/**
 * Occlusion-aware facade lines: per 16 px cell over the source's line pixels, as facadeLines, but a cell below the
 * upper part counts only when the result there is itself coherent (a line running another way), not texture
 * (furniture, a rug): what stands on the floor hides lines without being evidence. `vertOnly` keeps only the source's
 * near-vertical and near-horizontal line pixels (wall corners, jambs, ceiling lines).
 */
function occlusionAware(p: Prepared, r: number, upperTo: number, vertOnly: boolean) {
  const { w, h, gS, gR, compared } = p;
  const A = orientationField(gS, w, h, r, compared);
  const B = orientationField(gR, w, h, r, compared);
  const e = Float32Array.from([...A.E].filter((_, i) => compared[i])).sort();
  const strong = e.length ? e[Math.floor(0.7 * e.length)]! : 0;
  const CELL = 16;
  const cols = Math.ceil(w / CELL);
  const rows = Math.ceil(h / CELL);
  const sum = new Float64Array(cols * rows);
  const cnt = new Float64Array(cols * rows);
  const coh = new Float64Array(cols * rows);
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (!compared[i]) continue;
      const ma = Math.sqrt(A.C[i]! ** 2 + A.S[i]! ** 2);
      if (A.E[i]! < strong || ma < 0.5 * A.E[i]!) continue;
      if (vertOnly) {
        // Double angle near 0 (gradient along x: a vertical line) or pi (horizontal line).
        if (Math.abs(A.S[i]!) > 0.5 * ma) continue;
      }
      const mb = Math.sqrt(B.C[i]! ** 2 + B.S[i]! ** 2);
      const cos = mb > 1e-6 ? (A.C[i]! * B.C[i]! + A.S[i]! * B.S[i]!) / (ma * mb) : 0;
      const c = Math.floor(y / CELL) * cols + Math.floor(x / CELL);
      sum[c]! += cos;
      cnt[c]!++;
      coh[c]! += B.E[i]! > 0 ? mb / B.E[i]! : 0;
    }
  }
  let judged = 0;
  let turned = 0;
  for (let c = 0; c < sum.length; c++) {
    if (cnt[c]! < 12) continue;
    const upper = Math.floor(c / cols) * CELL < upperTo * h;
    const v = 1 - sum[c]! / cnt[c]!;
    const resultCoherent = coh[c]! / cnt[c]! > 0.5;
    if (!upper && !resultCoherent && v > 0.5) continue;
    judged++;
    if (v > 0.5) turned++;
  }
  return judged ? turned / judged : 0;
}

/** Whether `a` lies on the infinite line of `b` (within 6 degrees, its midpoint within 4 px of b's line). */
function collinear(a: Segment, b: Segment): boolean {
  let d = Math.abs(a.angle - b.angle);
  if (d > Math.PI / 2) d = Math.PI - d;
  if (d > Math.PI / 30) return false;
  const mx = (a.x1 + a.x2) / 2 - b.x1;
  const my = (a.y1 + a.y2) / 2 - b.y1;
  return Math.abs(-mx * Math.sin(b.angle) + my * Math.cos(b.angle)) < 4;
}

/**
 * Broken lines: the source's long lines kept along part of their length only (support 25-80 %): architecture that
 * continues outside a change and was cut inside it (a corner, a skirting), unlike furniture taken away (lost whole).
 * Novel lines: the result's long lines the source never had and that continue no line of the source (a new wall, a
 * new opening), unlike a skirting revealed behind a removed sofa. Both per length of the source's long lines.
 */
function brokenAndNovel(p: Prepared, L: ReturnType<typeof lineSet>) {
  let tot = 0;
  let broken = 0;
  for (const s of L.s) {
    const f = support(s, p.gR, p.w, p.h, 0.5 * L.tR, 2, p.compared);
    tot += s.length;
    if (f.share >= 0.25 && f.share < 0.8) broken += s.length * (1 - f.share);
  }
  let novel = 0;
  for (const r of L.r) {
    const f = support(r, p.gS, p.w, p.h, 0.5 * L.tS, 2, p.compared);
    if (f.share >= 0.5) continue;
    if (L.s.some((s) => collinear(r, s))) continue;
    novel += r.length * (1 - f.share);
  }
  return { broken: tot ? broken / tot : 0, novel: tot ? novel / tot : 0 };
}

/**
 * Where the result differs from the source (removal, issue 43): the result's tones mapped onto the source's, the
 * absolute difference box-blurred (radius 2), over max(12, 3 x its median) capped at 30, then grown by 3 px. A removal's filled
 * hole, a mask drawn over the source, furniture taken away.
 */
function changedArea(p: Prepared): Uint8Array {
  const { w, h, compared } = p;
  const m = matchTones(p.res, p.src, compared).data;
  const d = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) if (compared[i]) d[i] = Math.min(400, Math.abs(m[i]! - p.src.data[i]!));
  const b = boxBlur({ width: w, height: h, data: d }, 2).data;
  const t = Math.min(30, Math.max(12, 3 * quantile(b, compared, 0.5)));
  const raw = new Float32Array(w * h);
  for (let i = 0; i < w * h; i++) raw[i] = compared[i] && b[i]! > t ? 1 : 0;
  const grown = boxBlur({ width: w, height: h, data: raw }, 3).data;
  const out = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) out[i] = compared[i] && grown[i]! > 0 ? 1 : 0;
  return out;
}

const seg = (x1: number, y1: number, x2: number, y2: number, angle: number): Segment => ({
  x1,
  y1,
  x2,
  y2,
  angle,
  length: Math.hypot(x2 - x1, y2 - y1),
  strength: 0,
});

/**
 * Lines carried through a change (removal, issue 43). Each long source line that the result keeps outside the changed
 * area is extended from both ends along its direction; where the extension enters the changed area within 4 px,
 * crosses it, and the source shows the same line again beyond it (5 of the next 8 px), the line ran through the change
 * (a skirting behind a sofa, a corner behind a wardrobe). A kept removal continues it across the filled area (the
 * result's gradients support the gap); a changed one breaks, bends or rebuilds it. Returns the unsupported share of
 * all such gaps' length (0 when there are none).
 * `toBorder` also takes a change that the extension crosses up to the picture's edge.
 */
function throughLines(
  p: Prepared,
  segs: Segment[],
  changed: Uint8Array,
  tS: number,
  tR: number,
  gapShare = 0.5,
  gapRadius = 2,
  toBorder = false,
) {
  const { w, h, compared } = p;
  const diag = Math.hypot(w, h);
  const at = (x: number, y: number) => {
    const xi = Math.round(x);
    const yi = Math.round(y);
    return xi < 1 || yi < 1 || xi >= w - 1 || yi >= h - 1 ? -1 : yi * w + xi;
  };
  let gapLen = 0;
  let lost = 0;
  for (const s of segs) {
    // Kept outside the change: mostly outside it, and supported by the result along its own length.
    let inChange = 0;
    const steps = Math.max(1, Math.round(s.length));
    for (let k = 0; k <= steps; k++) {
      const i = at(s.x1 + ((s.x2 - s.x1) * k) / steps, s.y1 + ((s.y2 - s.y1) * k) / steps);
      if (i >= 0 && changed[i]) inChange++;
    }
    if (inChange > 0.3 * (steps + 1)) continue;
    if (support(s, p.gR, w, h, 0.5 * tR, 2, compared).share < 0.6) continue;
    const ux = (s.x2 - s.x1) / s.length;
    const uy = (s.y2 - s.y1) / s.length;
    for (const [ex, ey, dx, dy] of [
      [s.x2, s.y2, ux, uy],
      [s.x1, s.y1, -ux, -uy],
    ] as const) {
      let t = 1;
      let i = at(ex + dx * t, ey + dy * t);
      while (t <= 4 && i >= 0 && compared[i] && !changed[i]) i = at(ex + dx * ++t, ey + dy * t);
      if (i < 0 || !compared[i] || !changed[i]) continue;
      const t0 = t;
      while (i >= 0 && compared[i] && changed[i] && t < 0.6 * diag) i = at(ex + dx * ++t, ey + dy * t);
      if (t - t0 < 4) continue;
      const border = i < 0 || !compared[i];
      if (border && !toBorder) continue;
      if (!border) {
        if (changed[i]) continue;
        const far = seg(ex + dx * t, ey + dy * t, ex + dx * (t + 8), ey + dy * (t + 8), s.angle);
        const f = support(far, p.gS, w, h, 0.5 * tS, 2, compared);
        if (f.points < 6 || f.share < 5 / 9) continue;
      }
      const gap = seg(ex + dx * t0, ey + dy * t0, ex + dx * (t - 1), ey + dy * (t - 1), s.angle);
      const g = support(gap, p.gR, w, h, gapShare * tR, gapRadius, compared);
      gapLen += g.points;
      lost += g.points * (1 - g.share);
    }
  }
  return { share: gapLen ? lost / gapLen : 0 };
}

/**
 * New lines in a change (removal, issue 43): the result's long lines lying mostly (60 %) in the changed area that the
 * source does not support (under half) and that continue no source line (not collinear with one), inside the change `erode` px from its rim: a doorway, a new
 * wall edge, a rebuilt window, unlike a skirting or corner continued across a filled hole. Length per picture
 * diagonal, all and in the upper 55 % (walls, openings) only.
 */
function novelInChange(p: Prepared, L: { s: Segment[]; r: Segment[]; tS: number }, changedRaw: Uint8Array, erode = 6) {
  const { w, h, compared } = p;
  // The change's inside only (eroded by `erode` px): a seam or a frame drawn round a filled hole is on its rim.
  const blurred = boxBlur({ width: w, height: h, data: Float32Array.from(changedRaw) }, erode).data;
  const changed = new Uint8Array(w * h);
  for (let i = 0; i < w * h; i++) changed[i] = blurred[i]! > 0.999 ? 1 : 0;
  const diag = Math.hypot(w, h);
  let all = 0;
  let up = 0;
  for (const r of L.r) {
    let inChange = 0;
    const steps = Math.max(1, Math.round(r.length));
    for (let k = 0; k <= steps; k++) {
      const x = Math.round(r.x1 + ((r.x2 - r.x1) * k) / steps);
      const y = Math.round(r.y1 + ((r.y2 - r.y1) * k) / steps);
      if (x >= 0 && y >= 0 && x < w && y < h && changed[y * w + x]) inChange++;
    }
    if (inChange < 0.6 * (steps + 1)) continue;
    const f = support(r, p.gS, w, h, 0.5 * L.tS, 2, compared);
    if (f.share >= 0.5) continue;
    if (L.s.some((s) => collinear(r, s))) continue;
    const v = (r.length * (1 - f.share)) / diag;
    all += v;
    if (Math.min(r.y1, r.y2) < 0.55 * h) up += v;
  }
  return { all, up };
}

/**
 * Removal's lines through the change and new lines in it (issue 43): the changed area, then both; 0 = kept. `only`
 * computes novelLines alone (its CPU).
 */
export function removalLines(p: Prepared, only?: "novelLines"): Record<string, number> {
  const out: Record<string, number> = {};
  const changed = changedArea(p);
  if (only === "novelLines") return { novelLines: novelInChange(p, lineSet(p, 0.08), changed, 3).all };
  let n = 0;
  let c = 0;
  for (let i = 0; i < changed.length; i++) {
    n += p.compared[i]!;
    c += changed[i]!;
  }
  out.changeShare = n ? c / n : 0;
  const L5 = lineSet(p, 0.05);
  out.throughLost = throughLines(p, L5.s, changed, L5.tS, L5.tR).share;
  // A filled hole is softer than the photo round it: the gap supported by fainter edges, 3 px across.
  out.throughLostSoft = throughLines(p, L5.s, changed, L5.tS, L5.tR, 0.25, 3).share;
  // Also lines that ran from outside the change through it to the picture's edge (a change reaching the border).
  out.throughLostEdge = throughLines(p, L5.s, changed, L5.tS, L5.tR, 0.25, 3, true).share;
  const nv = novelInChange(p, L5, changed);
  out.novelIn = nv.all;
  out.novelInUp = nv.up;
  // Calibration sweep (lines of 4, 5 or 8 % of the diagonal; rim of 3, 6 or 10 px): AUC 0.56-0.74, rim 3 px best
  // (0.73-0.74), 6 px 0.60-0.62, 10 px 0.56-0.60. novelLines is the best: lines of 8 %, rim 3 px.
  out.novelLines = novelInChange(p, lineSet(p, 0.08), changed, 3).all;
  return out;
}

/** Every candidate geometry measure (0 = kept); names are the ADR's. */
export function geometryMeasures(source: Gray, result: Gray, kind: ResultKind): Record<string, number> {
  const p = prepare(source, result, kind);
  const out: Record<string, number> = {};
  for (const r of [2, 4, 8]) {
    // Structure-tensor disagreement over the whole picture and its upper part, weighted by the source's lines (src),
    // the result's (res) or both (Sym): production's roomTensor (geometry.ts) is tensorUp4Sym.
    const all = roomTensor(p, r, 1);
    const up = roomTensor(p, r, 0.55);
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
  const bn = brokenAndNovel(p, L);
  out.broken = bn.broken;
  out.novel = bn.novel;
  out.brokenNovel = bn.broken + bn.novel;
  out.occl4 = occlusionAware(p, 4, 0.55, false);
  out.occlV4 = occlusionAware(p, 4, 0.55, true);
  out.occl8 = occlusionAware(p, 8, 0.55, false);
  out.occlUpperOnly4 = occlusionAware(p, 4, 0, false);
  const op = openings(p);
  out.openAdded = op.added;
  out.openClosed = op.closed;
  out.openBoth = op.added + op.closed;
  out.angles = hellinger(angleHist(L.s), angleHist(L.r));
  if (kind === "removal") Object.assign(out, removalLines(p));
  out.scale = p.scale;
  return out;
}
