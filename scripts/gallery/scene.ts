// A tiny one-point-perspective renderer that writes SVG: rooms and furniture
// are boxes, cylinders and floor shapes in metres, projected through a level
// camera (vertical lines stay vertical, as in real-estate photography) and
// painted far to near. Used only by scripts/make-gallery-images.ts.

export type V3 = [number, number, number];
export type V2 = [number, number];

export const VIEW_W = 1440;
export const VIEW_H = 960;

export interface Camera {
  /** Camera position in the room (metres); it looks along +z. */
  x: number;
  y: number;
  /** Focal length in pixels. */
  f: number;
}

/** A direction towards the main light (window), roughly unit length. */
export type Light = V3;

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function clamp(v: number, lo: number, hi: number) {
  return Math.min(hi, Math.max(lo, v));
}

/** Scales a #rrggbb colour's brightness (1 = unchanged). */
export function shade(hex: string, k: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const ch = [(n >> 16) & 255, (n >> 8) & 255, n & 255].map((c) =>
    k <= 1 ? Math.round(c * k) : Math.round(c + (255 - c) * (k - 1)),
  );
  return `#${ch.map((c) => clamp(c, 0, 255).toString(16).padStart(2, "0")).join("")}`;
}

export function mix(a: string, b: string, t: number): string {
  const pa = Number.parseInt(a.slice(1), 16);
  const pb = Number.parseInt(b.slice(1), 16);
  const ch = [16, 8, 0].map((s) => Math.round(((pa >> s) & 255) * (1 - t) + ((pb >> s) & 255) * t));
  return `#${ch.map((c) => c.toString(16).padStart(2, "0")).join("")}`;
}

const fmt = (n: number) => (Math.round(n * 10) / 10).toString();
const pts = (p: V2[]) => p.map(([x, y]) => `${fmt(x)},${fmt(y)}`).join(" ");

export function hull(points: V2[]): V2[] {
  const p = [...points].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o: V2, a: V2, b: V2) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: V2[] = [];
  for (const q of p) {
    while (lower.length >= 2 && cross(lower[lower.length - 2]!, lower[lower.length - 1]!, q) <= 0) lower.pop();
    lower.push(q);
  }
  const upper: V2[] = [];
  for (const q of p.reverse()) {
    while (upper.length >= 2 && cross(upper[upper.length - 2]!, upper[upper.length - 1]!, q) <= 0) upper.pop();
    upper.push(q);
  }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

export interface Box {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  z0: number;
  z1: number;
}

export const box = (x0: number, x1: number, y0: number, y1: number, z0: number, z1: number): Box => ({
  x0,
  x1,
  y0,
  y1,
  z0,
  z1,
});

export class Scene {
  private defs: string[] = [];
  private out: string[] = [];
  private ids = 0;

  readonly cam: Camera;
  readonly light: Light;

  constructor(cam: Camera, light: Light) {
    this.cam = cam;
    this.light = light;
    this.defs.push(
      `<filter id="soft" x="-20%" y="-20%" width="140%" height="140%"><feGaussianBlur stdDeviation="9"/></filter>`,
      `<filter id="softer" x="-30%" y="-30%" width="160%" height="160%"><feGaussianBlur stdDeviation="22"/></filter>`,
      `<filter id="blur3" x="-10%" y="-10%" width="120%" height="120%"><feGaussianBlur stdDeviation="2.5"/></filter>`,
    );
  }

  p([x, y, z]: V3): V2 {
    const zz = Math.max(z, 0.05);
    return [VIEW_W / 2 + (this.cam.f * (x - this.cam.x)) / zz, VIEW_H * 0.42 - (this.cam.f * (y - this.cam.y)) / zz];
  }

  /** Pixels per metre at depth z. */
  scale(z: number): number {
    return this.cam.f / z;
  }

  id(prefix: string): string {
    this.ids += 1;
    return `${prefix}${this.ids}`;
  }

  def(svg: string) {
    this.defs.push(svg);
  }

  raw(svg: string) {
    this.out.push(svg);
  }

  /** A vertical or horizontal linear gradient; returns its url(). */
  gradient(stops: [number, string, number?][], dir: "v" | "h" = "v", box?: [number, number, number, number]): string {
    const id = this.id("g");
    const [x1, y1, x2, y2] = box ?? (dir === "v" ? [0, 0, 0, 1] : [0, 0, 1, 0]);
    const units = box ? ` gradientUnits="userSpaceOnUse"` : "";
    const s = stops
      .map(([o, c, a]) => `<stop offset="${o}" stop-color="${c}"${a === undefined ? "" : ` stop-opacity="${a}"`}/>`)
      .join("");
    this.defs.push(
      `<linearGradient id="${id}" x1="${x1}" y1="${y1}" x2="${x2}" y2="${y2}"${units}>${s}</linearGradient>`,
    );
    return `url(#${id})`;
  }

  radial(stops: [number, string, number?][], cx = 0.5, cy = 0.5, r = 0.5): string {
    const id = this.id("r");
    const s = stops
      .map(([o, c, a]) => `<stop offset="${o}" stop-color="${c}"${a === undefined ? "" : ` stop-opacity="${a}"`}/>`)
      .join("");
    this.defs.push(`<radialGradient id="${id}" cx="${cx}" cy="${cy}" r="${r}">${s}</radialGradient>`);
    return `url(#${id})`;
  }

  poly2(points: V2[], fill: string, extra = "") {
    this.out.push(`<polygon points="${pts(points)}" fill="${fill}"${extra ? ` ${extra}` : ""}/>`);
  }

  poly(points: V3[], fill: string, extra = "") {
    this.poly2(
      points.map((q) => this.p(q)),
      fill,
      extra,
    );
  }

  line(a: V3, b: V3, stroke: string, width = 1.2, extra = "") {
    const [x1, y1] = this.p(a);
    const [x2, y2] = this.p(b);
    this.out.push(
      `<line x1="${fmt(x1)}" y1="${fmt(y1)}" x2="${fmt(x2)}" y2="${fmt(y2)}" stroke="${stroke}" stroke-width="${fmt(width)}"${extra ? ` ${extra}` : ""}/>`,
    );
  }

  /** Brightness of a face with this outward normal under the scene's light. */
  lit(n: V3): number {
    const [lx, ly, lz] = this.light;
    const d = n[0] * lx + n[1] * ly + n[2] * lz;
    return 0.86 + 0.24 * Math.max(-0.4, d);
  }

  /** A box with its visible faces shaded by the light. `soft` rounds its corners a little. */
  box(b: Box, color: string, opts: { top?: string; front?: string; soft?: number; stroke?: string } = {}) {
    const { x0, x1, y0, y1, z0, z1 } = b;
    const c = this.cam;
    const faces: [V3[], V3, string | undefined][] = [];
    if (y1 < c.y)
      faces.push([
        [
          [x0, y1, z0],
          [x1, y1, z0],
          [x1, y1, z1],
          [x0, y1, z1],
        ],
        [0, 1, 0],
        opts.top,
      ]);
    if (y0 > c.y)
      faces.push([
        [
          [x0, y0, z0],
          [x1, y0, z0],
          [x1, y0, z1],
          [x0, y0, z1],
        ],
        [0, -1, 0],
        undefined,
      ]);
    if (x0 > c.x)
      faces.push([
        [
          [x0, y0, z0],
          [x0, y0, z1],
          [x0, y1, z1],
          [x0, y1, z0],
        ],
        [-1, 0, 0],
        undefined,
      ]);
    if (x1 < c.x)
      faces.push([
        [
          [x1, y0, z0],
          [x1, y0, z1],
          [x1, y1, z1],
          [x1, y1, z0],
        ],
        [1, 0, 0],
        undefined,
      ]);
    faces.push([
      [
        [x0, y0, z0],
        [x1, y0, z0],
        [x1, y1, z0],
        [x0, y1, z0],
      ],
      [0, 0, -1],
      opts.front,
    ]);
    const soft = opts.soft ?? 0;
    for (const [q, n, override] of faces) {
      const fill = override ?? shade(color, this.lit(n));
      const sw = soft > 0 ? soft * this.scale((z0 + z1) / 2) * 0.01 : 0.8;
      this.poly(q, fill, `stroke="${opts.stroke ?? fill}" stroke-width="${fmt(sw)}" stroke-linejoin="round"`);
    }
  }

  /** A soft contact shadow on the floor under a footprint, pushed away from the light. */
  shadow(x0: number, x1: number, z0: number, z1: number, strength = 0.34, spread = 0.08) {
    const dx = -this.light[0] * 0.12;
    const dz = -this.light[2] * 0.12;
    const q: V3[] = [
      [x0 - spread + dx, 0, z0 - spread + dz],
      [x1 + spread + dx, 0, z0 - spread + dz],
      [x1 + spread + dx, 0, z1 + spread + dz],
      [x0 - spread + dx, 0, z1 + spread + dz],
    ];
    this.poly(q, "#2b211a", `opacity="${strength}" filter="url(#soft)"`);
  }

  circle3(cx: number, cz: number, r: number, y: number, n = 40): V3[] {
    return Array.from({ length: n }, (_, i) => {
      const a = (i / n) * Math.PI * 2;
      return [cx + r * Math.cos(a), y, cz + r * Math.sin(a)] as V3;
    });
  }

  /** A vertical cylinder or a truncated cone (r0 at y0, r1 at y1). */
  cylinder(cx: number, cz: number, r0: number, r1: number, y0: number, y1: number, color: string, top?: string) {
    const bottom = this.circle3(cx, cz, r0, y0).map((q) => this.p(q));
    const topRing = this.circle3(cx, cz, r1, y1).map((q) => this.p(q));
    const side = hull([...bottom, ...topRing]);
    const xs = side.map((q) => q[0]);
    const l = Math.min(...xs);
    const r = Math.max(...xs);
    const g = this.gradient(
      [
        [0, shade(color, 0.78)],
        [0.35, shade(color, 1.06)],
        [0.7, color],
        [1, shade(color, 0.72)],
      ],
      "h",
      [l, 0, r, 0],
    );
    this.poly2(side, g);
    if (y1 < this.cam.y) this.poly2(topRing, top ?? shade(color, 1.12));
    else if (y0 > this.cam.y) this.poly2(bottom, shade(color, 0.7));
  }

  /** A flat shape lying on the floor (rugs): a polygon in x/z at height y. */
  floorShape(points: [number, number][], y: number, fill: string, extra = "") {
    this.poly(
      points.map(([x, z]) => [x, y, z] as V3),
      fill,
      extra,
    );
  }

  ellipseFloor(cx: number, cz: number, rx: number, rz: number, y: number, fill: string, extra = "") {
    const q: [number, number][] = Array.from({ length: 56 }, (_, i) => {
      const a = (i / 56) * Math.PI * 2;
      return [cx + rx * Math.cos(a), cz + rz * Math.sin(a)];
    });
    this.floorShape(q, y, fill, extra);
  }

  /** A glow of light around a point (lamps). */
  glow(at: V3, radiusM: number, color = "#ffe7b0", opacity = 0.55) {
    const [x, y] = this.p(at);
    const r = radiusM * this.scale(at[2]);
    const g = this.radial([
      [0, color, opacity],
      [1, color, 0],
    ]);
    this.out.push(`<circle cx="${fmt(x)}" cy="${fmt(y)}" r="${fmt(r)}" fill="${g}"/>`);
  }

  /** Leaves fanned out from a point: a potted plant's foliage. */
  foliage(
    base: V3,
    heightM: number,
    opts: { seed: number; leaves?: number; spread?: number; colors?: string[]; leafLen?: number; leafW?: number },
  ) {
    const rand = rng(opts.seed);
    const s = this.scale(base[2]);
    const [bx, by] = this.p(base);
    const colors = opts.colors ?? ["#3f6b3a", "#4f8046", "#5d9150", "#355c31", "#6ea05c"];
    const n = opts.leaves ?? 22;
    const spread = opts.spread ?? 0.9;
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const t = i / n;
      const ang = -Math.PI / 2 + (rand() - 0.5) * Math.PI * spread;
      const reach = heightM * (0.35 + 0.65 * rand()) * s;
      const cx = bx + Math.cos(ang) * reach * 0.55;
      const cy = by + Math.sin(ang) * reach * 0.75;
      const len = (opts.leafLen ?? 0.28) * s * (0.7 + rand() * 0.6);
      const w = len * (opts.leafW ?? 0.34);
      const rot = (ang * 180) / Math.PI + (rand() - 0.5) * 40;
      const col = colors[Math.floor(rand() * colors.length)]!;
      const fill = t < 0.35 ? shade(col, 0.8) : col;
      parts.push(
        `<ellipse cx="${fmt(cx)}" cy="${fmt(cy)}" rx="${fmt(len / 2)}" ry="${fmt(w / 2)}" fill="${fill}" transform="rotate(${fmt(rot)} ${fmt(cx)} ${fmt(cy)})"/>`,
      );
    }
    this.out.push(`<g>${parts.join("")}</g>`);
  }

  svg(width: number, height: number): string {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${VIEW_W} ${VIEW_H}" preserveAspectRatio="xMidYMid slice"><defs>${this.defs.join("")}</defs>${this.out.join("")}</svg>`;
  }
}
