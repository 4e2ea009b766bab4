// Furniture built from boxes and cylinders, painted back to front.
import { box, rng, type Scene, shade, type V3 } from "./scene.ts";

const LEG = "#4a3a2e";

export function rug(
  s: Scene,
  x0: number,
  x1: number,
  z0: number,
  z1: number,
  color: string,
  border = shade(color, 1.25),
  stripes = 0,
) {
  s.floorShape(
    [
      [x0, z0],
      [x1, z0],
      [x1, z1],
      [x0, z1],
    ],
    0.004,
    color,
  );
  const b = 0.12;
  s.floorShape(
    [
      [x0 + b, z0 + b],
      [x1 - b, z0 + b],
      [x1 - b, z1 - b],
      [x0 + b, z1 - b],
    ],
    0.005,
    "none",
    `stroke="${border}" stroke-width="3"`,
  );
  for (let i = 1; i <= stripes; i++) {
    const z = z0 + ((z1 - z0) * i) / (stripes + 1);
    s.line([x0 + b, 0.006, z], [x1 - b, 0.006, z], border, 2, `opacity="0.6"`);
  }
}

export function roundRug(s: Scene, cx: number, cz: number, r: number, color: string, ring = shade(color, 1.2)) {
  s.ellipseFloor(cx, cz, r, r, 0.004, color);
  s.ellipseFloor(cx, cz, r * 0.82, r * 0.82, 0.005, "none", `stroke="${ring}" stroke-width="4"`);
  s.ellipseFloor(cx, cz, r * 0.45, r * 0.45, 0.005, "none", `stroke="${ring}" stroke-width="2.5" opacity="0.7"`);
}

/** A throw pillow: a rounded, slightly tilted cushion facing the camera. */
export function pillow(s: Scene, at: V3, wM: number, hM: number, color: string, tilt = 0, pattern?: string) {
  const [x, y] = s.p(at);
  const k = s.scale(at[2]);
  const w = wM * k;
  const h = hM * k;
  const g = s.gradient([
    [0, shade(color, 1.12)],
    [0.55, color],
    [1, shade(color, 0.8)],
  ]);
  const t = `transform="rotate(${tilt.toFixed(1)} ${x.toFixed(1)} ${y.toFixed(1)})"`;
  s.raw(
    `<rect x="${(x - w / 2).toFixed(1)}" y="${(y - h).toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" rx="${(h * 0.28).toFixed(1)}" fill="${g}" ${t}/>`,
  );
  if (pattern)
    s.raw(
      `<rect x="${(x - w * 0.32).toFixed(1)}" y="${(y - h * 0.7).toFixed(1)}" width="${(w * 0.64).toFixed(1)}" height="${(h * 0.4).toFixed(1)}" rx="${(h * 0.12).toFixed(1)}" fill="none" stroke="${pattern}" stroke-width="${(h * 0.06).toFixed(1)}" ${t}/>`,
    );
}

export interface SofaOpts {
  color: string;
  legs?: string;
  seatH?: number;
  backH?: number;
  arm?: number;
  cushions?: number;
  pillows?: { color: string; pattern?: string }[];
}

/** A sofa facing the camera, its back at z1. */
export function sofa(s: Scene, x0: number, x1: number, z0: number, z1: number, o: SofaOpts) {
  const c = o.color;
  const arm = o.arm ?? 0.2;
  const seatH = o.seatH ?? 0.44;
  const backH = o.backH ?? 0.84;
  const n = o.cushions ?? 3;
  s.shadow(x0, x1, z0, z1, 0.42);
  const legH = 0.1;
  for (const x of [x0 + 0.06, x1 - 0.1]) s.box(box(x, x + 0.04, 0, legH, z0 + 0.05, z0 + 0.09), o.legs ?? LEG);
  s.box(box(x0, x1, legH, 0.3, z0 + 0.02, z1), shade(c, 0.9), { soft: 1 });
  s.box(box(x0 + 0.04, x1 - 0.04, 0.3, backH, z1 - 0.2, z1), c, { soft: 3 });
  const inner0 = x0 + arm;
  const inner1 = x1 - arm;
  const cw = (inner1 - inner0) / n;
  for (let i = 0; i < n; i++)
    s.box(
      box(inner0 + i * cw + 0.01, inner0 + (i + 1) * cw - 0.01, seatH - 0.02, backH - 0.04, z1 - 0.36, z1 - 0.2),
      shade(c, 1.03),
      {
        soft: 5,
      },
    );
  s.box(box(x0, x0 + arm, legH, seatH + 0.18, z0, z1), c, { soft: 4 });
  s.box(box(x1 - arm, x1, legH, seatH + 0.18, z0, z1), c, { soft: 4 });
  for (let i = 0; i < n; i++)
    s.box(
      box(inner0 + i * cw + 0.008, inner0 + (i + 1) * cw - 0.008, 0.3, seatH, z0 + 0.03, z1 - 0.34),
      shade(c, 1.02),
      {
        soft: 5,
      },
    );
  const ps = o.pillows ?? [];
  ps.forEach((p, i) => {
    const left = i % 2 === 0;
    const k = Math.floor(i / 2);
    const x = left ? inner0 + 0.22 + k * 0.34 : inner1 - 0.22 - k * 0.34;
    pillow(s, [x, seatH + 0.01, z1 - 0.38 + k * 0.02], 0.42, 0.4, p.color, left ? -7 : 7, p.pattern);
  });
}

/** An armchair seen from the side, facing -x (towards the room's middle) or +x. */
export function armchairSide(
  s: Scene,
  x0: number,
  x1: number,
  z0: number,
  z1: number,
  color: string,
  facing: "left" | "right",
) {
  s.shadow(x0, x1, z0, z1, 0.4);
  const backAtX1 = facing === "left";
  const seatH = 0.44;
  for (const z of [z0 + 0.05]) {
    s.box(box(x0 + 0.05, x0 + 0.09, 0, 0.12, z, z + 0.04), LEG);
    s.box(box(x1 - 0.09, x1 - 0.05, 0, 0.12, z, z + 0.04), LEG);
  }
  s.box(box(x0, x1, 0.12, 0.3, z0 + 0.12, z1 - 0.12), shade(color, 0.9), { soft: 2 });
  if (backAtX1) s.box(box(x1 - 0.18, x1, 0.12, 0.86, z0 + 0.02, z1 - 0.02), color, { soft: 4 });
  else s.box(box(x0, x0 + 0.18, 0.12, 0.86, z0 + 0.02, z1 - 0.02), color, { soft: 4 });
  s.box(box(x0, x1, 0.12, 0.6, z1 - 0.14, z1), color, { soft: 4 });
  const sx0 = backAtX1 ? x0 + 0.02 : x0 + 0.18;
  const sx1 = backAtX1 ? x1 - 0.18 : x1 - 0.02;
  s.box(box(sx0, sx1, 0.3, seatH, z0 + 0.14, z1 - 0.14), shade(color, 1.04), { soft: 5 });
  s.box(box(x0, x1, 0.12, 0.6, z0, z0 + 0.14), color, { soft: 4 });
}

/** A lounge chair facing the camera. */
export function armchair(
  s: Scene,
  x0: number,
  x1: number,
  z0: number,
  z1: number,
  color: string,
  pillowColor?: string,
) {
  s.shadow(x0, x1, z0, z1, 0.4);
  for (const x of [x0 + 0.05, x1 - 0.09]) s.box(box(x, x + 0.04, 0, 0.14, z0 + 0.05, z0 + 0.09), LEG);
  s.box(box(x0, x1, 0.14, 0.32, z0 + 0.03, z1), shade(color, 0.9), { soft: 2 });
  s.box(box(x0 + 0.03, x1 - 0.03, 0.32, 0.88, z1 - 0.18, z1), color, { soft: 4 });
  s.box(box(x0, x0 + 0.16, 0.14, 0.62, z0, z1), color, { soft: 4 });
  s.box(box(x1 - 0.16, x1, 0.14, 0.62, z0, z1), color, { soft: 4 });
  s.box(box(x0 + 0.16, x1 - 0.16, 0.32, 0.46, z0 + 0.03, z1 - 0.18), shade(color, 1.04), { soft: 5 });
  if (pillowColor) pillow(s, [(x0 + x1) / 2, 0.47, z1 - 0.22], 0.36, 0.32, pillowColor, 4);
}

/** A four-legged table or bench; `shelf` adds a lower shelf. */
export function table(
  s: Scene,
  x0: number,
  x1: number,
  z0: number,
  z1: number,
  h: number,
  top: string,
  opts: { legs?: string; thick?: number; shelf?: boolean; leg?: number; inset?: number; shadow?: number } = {},
) {
  const legC = opts.legs ?? shade(top, 0.7);
  const t = opts.thick ?? 0.04;
  const lw = opts.leg ?? 0.045;
  const ins = opts.inset ?? 0.05;
  s.shadow(x0, x1, z0, z1, opts.shadow ?? 0.28, 0.04);
  const legAt = (x: number, z: number) => s.box(box(x, x + lw, 0, h - t, z, z + lw), legC);
  legAt(x0 + ins, z1 - ins - lw);
  legAt(x1 - ins - lw, z1 - ins - lw);
  if (opts.shelf) s.box(box(x0 + ins, x1 - ins, 0.12, 0.15, z0 + ins, z1 - ins), shade(top, 0.92));
  legAt(x0 + ins, z0 + ins);
  legAt(x1 - ins - lw, z0 + ins);
  s.box(box(x0, x1, h - t, h, z0, z1), top, { top: shade(top, 1.08) });
}

export function roundTable(
  s: Scene,
  cx: number,
  cz: number,
  r: number,
  h: number,
  top: string,
  base = shade(top, 0.7),
) {
  s.ellipseFloor(cx + 0.06, cz + 0.04, r * 0.9, r * 0.9, 0.002, "#2b211a", `opacity="0.3" filter="url(#soft)"`);
  s.cylinder(cx, cz, r * 0.45, r * 0.12, 0, 0.05, base);
  s.cylinder(cx, cz, r * 0.1, r * 0.1, 0.05, h - 0.04, base);
  s.cylinder(cx, cz, r, r, h - 0.04, h, top, shade(top, 1.08));
}

export function floorLamp(s: Scene, x: number, z: number, h: number, shadeColor = "#f3ead9", metal = "#2f2a26") {
  s.ellipseFloor(x + 0.05, z + 0.05, 0.2, 0.2, 0.002, "#2b211a", `opacity="0.28" filter="url(#soft)"`);
  s.cylinder(x, z, 0.15, 0.14, 0, 0.025, metal);
  s.box(box(x - 0.012, x + 0.012, 0.025, h - 0.22, z - 0.012, z + 0.012), metal);
  s.glow([x, h - 0.12, z], 0.9, "#ffe2a6", 0.5);
  s.cylinder(x, z, 0.24, 0.17, h - 0.3, h, shadeColor);
}

export function tableLamp(s: Scene, x: number, y: number, z: number, base = "#d9cbb6", shadeColor = "#f5eee2") {
  s.cylinder(x, z, 0.07, 0.05, y, y + 0.26, base);
  s.glow([x, y + 0.36, z], 0.6, "#ffe2a6", 0.55);
  s.cylinder(x, z, 0.16, 0.12, y + 0.26, y + 0.5, shadeColor);
}

/** A pendant hanging from the ceiling: cord, then a dome or drum shade, lit from below. */
export function pendant(
  s: Scene,
  x: number,
  z: number,
  ceiling: number,
  drop: number,
  color: string,
  r = 0.22,
  kind: "dome" | "drum" | "globe" = "dome",
) {
  const y = ceiling - drop;
  s.line([x, ceiling, z], [x, y + 0.1, z], "#2a2522", 1.6);
  s.glow([x, y - 0.05, z], 1.1, "#ffe3a8", 0.4);
  if (kind === "globe") {
    const [px, py] = s.p([x, y, z]);
    const rr = r * s.scale(z);
    const g = s.radial(
      [
        [0, "#fffdf4"],
        [0.7, "#ffeecb"],
        [1, "#f0d9a8"],
      ],
      0.45,
      0.4,
      0.6,
    );
    s.raw(`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="${rr.toFixed(1)}" fill="${g}"/>`);
    return;
  }
  if (kind === "drum") s.cylinder(x, z, r, r, y - 0.18, y + 0.08, color);
  else {
    s.cylinder(x, z, r * 0.25, r * 0.25, y + 0.02, y + 0.12, color);
    s.cylinder(x, z, r, r * 0.3, y - 0.16, y + 0.04, color);
  }
  s.ellipseFloor(x, z, r * 0.8, r * 0.8, y - 0.16, "#fff2cf", `opacity="0.95"`);
}

export function pottedPlant(
  s: Scene,
  x: number,
  z: number,
  h: number,
  opts: { pot?: string; potH?: number; potR?: number; seed?: number; tall?: boolean; y?: number } = {},
) {
  const y = opts.y ?? 0;
  const potR = opts.potR ?? 0.18;
  const potH = opts.potH ?? 0.36;
  if (y === 0)
    s.ellipseFloor(x + 0.06, z + 0.04, potR * 1.4, potR * 1.4, 0.002, "#2b211a", `opacity="0.3" filter="url(#soft)"`);
  const seed = opts.seed ?? 7;
  if (opts.tall) {
    s.line([x, y + potH, z], [x + 0.03, y + h * 0.95, z], "#5a4632", 2.2);
    for (let i = 0; i < 5; i++) {
      const yy = y + potH + ((h - potH) * (i + 1)) / 6;
      s.foliage([x + (i % 2 ? 0.04 : -0.04), yy, z], 0.5, {
        seed: seed + i * 13,
        leaves: 7,
        spread: 1.5,
        leafLen: 0.26,
        leafW: 0.6,
        colors: ["#34612f", "#417339", "#4e8443", "#2d5529"],
      });
    }
  } else {
    s.cylinder(x, z, potR * 0.8, potR, y, y + potH, opts.pot ?? "#e8e1d6", "#5b4636");
    s.foliage([x, y + potH, z], h - potH, { seed, leaves: 30, spread: 1.35 });
    return;
  }
  s.cylinder(x, z, potR * 0.8, potR, y, y + potH, opts.pot ?? "#e8e1d6", "#5b4636");
}

/** A framed picture on the back wall (z = wallZ), with an abstract print. */
export function wallArt(
  s: Scene,
  x0: number,
  x1: number,
  y0: number,
  y1: number,
  wallZ: number,
  palette: string[],
  seed: number,
  frame = "#2b2622",
) {
  const [ax, ay] = s.p([x0, y1, wallZ]);
  const [bx, by] = s.p([x1, y0, wallZ]);
  const w = bx - ax;
  const h = by - ay;
  const rand = rng(seed);
  const id = s.id("art");
  const m = Math.min(w, h) * 0.09;
  s.def(
    `<clipPath id="${id}"><rect x="${ax + m}" y="${ay + m}" width="${w - 2 * m}" height="${h - 2 * m}"/></clipPath>`,
  );
  s.raw(
    `<rect x="${(ax + 6).toFixed(1)}" y="${(ay + 8).toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="#2b211a" opacity="0.25" filter="url(#blur3)"/>`,
  );
  s.raw(
    `<rect x="${ax.toFixed(1)}" y="${ay.toFixed(1)}" width="${w.toFixed(1)}" height="${h.toFixed(1)}" fill="${frame}"/>`,
  );
  s.raw(
    `<rect x="${(ax + m * 0.35).toFixed(1)}" y="${(ay + m * 0.35).toFixed(1)}" width="${(w - m * 0.7).toFixed(1)}" height="${(h - m * 0.7).toFixed(1)}" fill="#fbf9f5"/>`,
  );
  const shapes: string[] = [`<rect x="${ax}" y="${ay}" width="${w}" height="${h}" fill="${palette[0]}"/>`];
  for (let i = 0; i < 4; i++) {
    const col = palette[1 + (i % (palette.length - 1))]!;
    const cx = ax + w * (0.2 + rand() * 0.6);
    const cy = ay + h * (0.25 + rand() * 0.6);
    const r = Math.min(w, h) * (0.15 + rand() * 0.25);
    shapes.push(
      rand() > 0.5
        ? `<circle cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" r="${r.toFixed(1)}" fill="${col}" opacity="0.9"/>`
        : `<path d="M${(ax).toFixed(1)} ${(cy + r).toFixed(1)} Q ${cx.toFixed(1)} ${(cy - r).toFixed(1)} ${(ax + w).toFixed(1)} ${(cy + r * 0.6).toFixed(1)} L ${(ax + w).toFixed(1)} ${(ay + h).toFixed(1)} L ${ax.toFixed(1)} ${(ay + h).toFixed(1)} Z" fill="${col}" opacity="0.85"/>`,
    );
  }
  s.raw(`<g clip-path="url(#${id})">${shapes.join("")}</g>`);
}

export function roundMirror(s: Scene, cx: number, cy: number, r: number, wallZ: number, frame = "#b08a4e") {
  const [x, y] = s.p([cx, cy, wallZ]);
  const rr = r * s.scale(wallZ);
  s.raw(
    `<circle cx="${(x + 5).toFixed(1)}" cy="${(y + 7).toFixed(1)}" r="${rr.toFixed(1)}" fill="#2b211a" opacity="0.22" filter="url(#blur3)"/>`,
  );
  s.raw(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${rr.toFixed(1)}" fill="${frame}"/>`);
  const g = s.gradient([
    [0, "#eef3f6"],
    [0.5, "#c9d6dd"],
    [1, "#a9b8c0"],
  ]);
  s.raw(`<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${(rr * 0.9).toFixed(1)}" fill="${g}"/>`);
}

/** A cabinet with doors or drawers drawn on its front. */
export function cabinet(
  s: Scene,
  b: ReturnType<typeof box>,
  color: string,
  doors: number,
  opts: { handle?: string; top?: string; drawers?: boolean; shadow?: boolean } = {},
) {
  if (opts.shadow !== false && b.y0 === 0) s.shadow(b.x0, b.x1, b.z0, b.z1, 0.3, 0.03);
  s.box(b, color, { top: opts.top });
  const line = shade(color, 0.78);
  const z = b.z0;
  const handle = opts.handle ?? "#8a8178";
  for (let i = 1; i < doors; i++) {
    const x = b.x0 + ((b.x1 - b.x0) * i) / doors;
    s.line([x, b.y0 + 0.02, z], [x, b.y1 - 0.02, z], line, 1.4);
  }
  if (opts.drawers) {
    const y = b.y1 - (b.y1 - b.y0) * 0.28;
    s.line([b.x0 + 0.01, y, z], [b.x1 - 0.01, y, z], line, 1.4);
  }
  for (let i = 0; i < doors; i++) {
    const xa = b.x0 + ((b.x1 - b.x0) * (i + 0.5)) / doors;
    const yh = opts.drawers ? b.y1 - (b.y1 - b.y0) * 0.14 : b.y0 > 1 ? b.y0 + 0.12 : b.y1 - 0.12;
    s.box(box(xa - 0.07, xa + 0.07, yh - 0.008, yh + 0.008, z - 0.02, z), handle);
  }
}

/** A dining chair; `backAt` is the side of the backrest ("far" faces the camera, "near" faces away). */
export function diningChair(
  s: Scene,
  x0: number,
  x1: number,
  z0: number,
  z1: number,
  color: string,
  wood: string,
  backAt: "far" | "near",
) {
  s.shadow(x0, x1, z0, z1, 0.22, 0.03);
  const lw = 0.035;
  const leg = (x: number, z: number) => s.box(box(x, x + lw, 0, 0.44, z, z + lw), wood);
  leg(x0 + 0.02, z1 - 0.02 - lw);
  leg(x1 - 0.02 - lw, z1 - 0.02 - lw);
  const back = (z: number) => s.box(box(x0 + 0.01, x1 - 0.01, 0.48, 0.98, z, z + 0.06), color, { soft: 3 });
  if (backAt === "far") back(z1 - 0.06);
  leg(x0 + 0.02, z0 + 0.02);
  leg(x1 - 0.02 - lw, z0 + 0.02);
  s.box(box(x0, x1, 0.42, 0.5, z0, z1), color, { soft: 3 });
  if (backAt === "near") back(z0);
}

/** A dining chair at the end of a table, seen from the side; its backrest on the `backAt` side. */
export function diningChairSide(
  s: Scene,
  x0: number,
  x1: number,
  z0: number,
  z1: number,
  color: string,
  wood: string,
  backAt: "left" | "right",
) {
  s.shadow(x0, x1, z0, z1, 0.22, 0.03);
  const lw = 0.035;
  const leg = (x: number, z: number) => s.box(box(x, x + lw, 0, 0.44, z, z + lw), wood);
  leg(x0 + 0.02, z1 - 0.02 - lw);
  leg(x1 - 0.02 - lw, z1 - 0.02 - lw);
  leg(x0 + 0.02, z0 + 0.02);
  leg(x1 - 0.02 - lw, z0 + 0.02);
  const bx = backAt === "left" ? x0 : x1 - 0.06;
  s.box(box(x0, x1, 0.42, 0.5, z0, z1), color, { soft: 3 });
  s.box(box(bx, bx + 0.06, 0.48, 0.98, z0 + 0.01, z1 - 0.01), color, { soft: 3 });
}

export function barStool(s: Scene, x: number, z: number, seat: string, metal = "#2d2a27") {
  s.ellipseFloor(x + 0.04, z + 0.04, 0.22, 0.22, 0.002, "#2b211a", `opacity="0.25" filter="url(#soft)"`);
  for (const [dx, dz] of [
    [-0.14, 0.12],
    [0.12, 0.12],
  ] as const)
    s.box(box(x + dx, x + dx + 0.025, 0, 0.7, z + dz, z + dz + 0.025), metal);
  s.ellipseFloor(x, z, 0.17, 0.17, 0.27, "none", `stroke="${metal}" stroke-width="3"`);
  for (const [dx, dz] of [
    [-0.14, -0.14],
    [0.12, -0.14],
  ] as const)
    s.box(box(x + dx, x + dx + 0.025, 0, 0.7, z + dz, z + dz + 0.025), metal);
  s.cylinder(x, z, 0.2, 0.2, 0.68, 0.74, seat);
}

/** A low bowl or a vase on a surface. */
export function vase(s: Scene, x: number, y: number, z: number, r: number, h: number, color: string) {
  s.cylinder(x, z, r * 0.7, r, y, y + h * 0.6, color);
  s.cylinder(x, z, r, r * 0.45, y + h * 0.6, y + h, color);
}

export function books(s: Scene, x0: number, y: number, z0: number, z1: number, count: number, seed: number) {
  const rand = rng(seed);
  const colors = ["#2f4858", "#b5654a", "#d9c7a7", "#5c7a6b", "#8a4f5f", "#e4ddd2", "#3c3a36", "#c29b57"];
  let x = x0;
  for (let i = 0; i < count; i++) {
    const w = 0.025 + rand() * 0.025;
    const h = 0.17 + rand() * 0.1;
    s.box(box(x, x + w, y, y + h, z0, z1), colors[Math.floor(rand() * colors.length)]!);
    x += w + 0.003;
  }
  return x;
}
