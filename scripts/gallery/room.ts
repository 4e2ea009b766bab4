// The empty room: ceiling, walls, floor, windows with daylight and the light
// they throw on the floor. Staging adds furniture on top (furniture.ts); the
// "before" picture is this alone, exactly as a real before/after pair.
import { type Box, box, mix, rng, type Scene, shade, type V2, type V3, VIEW_W } from "./scene.ts";

export interface WindowSpec {
  wall: "back" | "left" | "right";
  /** Along the wall: x for the back wall, z for a side wall. */
  a0: number;
  a1: number;
  y0: number;
  y1: number;
  /** Vertical glazing bars. */
  bars?: number;
  /** A horizontal bar at this height. */
  transom?: number;
}

export interface RoomSpec {
  w: number;
  d: number;
  h: number;
  near: number;
  wall: string;
  ceiling: string;
  floor: { kind: "planks" | "carpet"; color: string; plank?: number };
  windows: WindowSpec[];
  /** Direction the sunlight travels (down and into the room); none when something blocks it. */
  sun?: V3;
  trim?: string;
  seed: number;
}

export function drawRoom(s: Scene, r: RoomSpec) {
  const L = -r.w / 2;
  const R = r.w / 2;
  const { d: D, h: H, near: N } = r;
  const trim = r.trim ?? "#f7f5f1";

  // Ceiling and walls.
  const ceil = [s.p([L, H, N]), s.p([R, H, N]), s.p([R, H, D]), s.p([L, H, D])];
  s.poly2(
    ceil,
    s.gradient([
      [0, shade(r.ceiling, 0.86)],
      [1, shade(r.ceiling, 0.98)],
    ]),
  );
  const leftWall: V3[] = [
    [L, 0, N],
    [L, 0, D],
    [L, H, D],
    [L, H, N],
  ];
  const rightWall: V3[] = [
    [R, 0, N],
    [R, 0, D],
    [R, H, D],
    [R, H, N],
  ];
  const [bl] = s.p([L, 0, D]);
  const [br] = s.p([R, 0, D]);
  s.poly(
    leftWall,
    s.gradient(
      [
        [0, shade(r.wall, s.lit([1, 0, 0]) * 0.93)],
        [1, shade(r.wall, s.lit([1, 0, 0]))],
      ],
      "h",
      [0, 0, bl, 0],
    ),
  );
  s.poly(
    rightWall,
    s.gradient(
      [
        [0, shade(r.wall, s.lit([-1, 0, 0]))],
        [1, shade(r.wall, s.lit([-1, 0, 0]) * 0.92)],
      ],
      "h",
      [br, 0, VIEW_W, 0],
    ),
  );
  const back = s.lit([0, 0, -1]);
  s.poly(
    [
      [L, 0, D],
      [R, 0, D],
      [R, H, D],
      [L, H, D],
    ],
    s.gradient(
      [
        [0, shade(r.wall, back * (s.light[0] < 0 ? 1.02 : 0.95))],
        [1, shade(r.wall, back * (s.light[0] < 0 ? 0.95 : 1.02))],
      ],
      "h",
      [bl, 0, br, 0],
    ),
  );

  // Floor.
  const floorPts: V3[] = [
    [L, 0, N],
    [R, 0, N],
    [R, 0, D],
    [L, 0, D],
  ];
  const clip = s.id("floor");
  s.def(`<clipPath id="${clip}"><polygon points="${floorPts.map((q) => s.p(q).join(",")).join(" ")}"/></clipPath>`);
  const fc = r.floor.color;
  s.poly(
    floorPts,
    s.gradient([
      [0, shade(fc, 1.04)],
      [1, shade(fc, 0.9)],
    ]),
  );
  if (r.floor.kind === "planks") {
    const rand = rng(r.seed);
    const pw = r.floor.plank ?? 0.18;
    const parts: string[] = [];
    for (let x = L; x < R; x += pw) {
      let z = N;
      while (z < D) {
        const len = 0.9 + rand() * 1.6;
        const z2 = Math.min(D, z + len);
        const k = 0.93 + rand() * 0.12;
        const q = [s.p([x, 0, z]), s.p([x + pw, 0, z]), s.p([x + pw, 0, z2]), s.p([x, 0, z2])];
        parts.push(
          `<polygon points="${q.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" ")}" fill="${shade(fc, k)}" stroke="${shade(fc, 0.72)}" stroke-width="0.9" stroke-opacity="0.55"/>`,
        );
        z = z2;
      }
    }
    s.raw(`<g clip-path="url(#${clip})">${parts.join("")}</g>`);
  }
  // Depth: the floor near the camera a little darker, the far end hazier.
  s.poly(
    floorPts,
    s.gradient([
      [0, "#ffffff", 0.1],
      [0.5, "#ffffff", 0],
      [1, "#000000", 0.14],
    ]),
  );

  for (const w of r.windows) drawWindow(s, r, w, clip);

  // Skirting boards and the shadowed corners.
  const bb = 0.09;
  s.box(box(L, R, 0, bb, D - 0.015, D), trim);
  s.poly(
    [
      [L, 0, N],
      [L, 0, D],
      [L, bb, D],
      [L, bb, N],
    ],
    shade(trim, s.lit([1, 0, 0])),
  );
  s.poly(
    [
      [R, 0, N],
      [R, 0, D],
      [R, bb, D],
      [R, bb, N],
    ],
    shade(trim, s.lit([-1, 0, 0])),
  );
  const ao = "#3b3129";
  for (const x of [L, R]) {
    s.line([x, 0, D], [x, H, D], ao, 10, `opacity="0.12" filter="url(#blur3)"`);
    s.line([x, H, N], [x, H, D], ao, 8, `opacity="0.1" filter="url(#blur3)"`);
  }
  s.line([L, H, D], [R, H, D], ao, 8, `opacity="0.1" filter="url(#blur3)"`);
  s.line([L, 0, D], [R, 0, D], ao, 6, `opacity="0.16" filter="url(#blur3)"`);
}

function drawWindow(s: Scene, r: RoomSpec, w: WindowSpec, floorClip: string) {
  const L = -r.w / 2;
  const R = r.w / 2;
  const D = r.d;
  const depth = 0.16;
  // Opening on the wall plane and the glass set back into the wall.
  const at = (a: number, y: number, inset: number): V3 =>
    w.wall === "back" ? [a, y, D + inset] : w.wall === "left" ? [L - inset, y, a] : [R + inset, y, a];
  const opening = [at(w.a0, w.y0, 0), at(w.a1, w.y0, 0), at(w.a1, w.y1, 0), at(w.a0, w.y1, 0)];
  const glass = [at(w.a0, w.y0, depth), at(w.a1, w.y0, depth), at(w.a1, w.y1, depth), at(w.a0, w.y1, depth)];
  const op2 = opening.map((q) => s.p(q));
  const clip = s.id("win");
  s.def(`<clipPath id="${clip}"><polygon points="${op2.map((q) => q.join(",")).join(" ")}"/></clipPath>`);
  const trim = r.trim ?? "#f7f5f1";
  // Reveal (the inside of the opening), then the view, clipped to the opening.
  s.poly2(op2, shade(trim, 0.9));
  const g2 = glass.map((q) => s.p(q));
  const xs = g2.map((q) => q[0]);
  const ys = g2.map((q) => q[1]);
  const [gx0, gx1, gy0, gy1] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const sky = s.gradient(
    [
      [0, "#7fb0e0"],
      [0.6, "#b9d6ef"],
      [1, "#e9f1f6"],
    ],
    "v",
    [0, gy0, 0, gy1],
  );
  const rand = rng(r.seed + Math.round(w.a0 * 100));
  const trees: string[] = [];
  const horizon = gy0 + (gy1 - gy0) * 0.68;
  for (let i = 0; i < 14; i++) {
    const tx = gx0 + (gx1 - gx0) * rand();
    const tr = (gx1 - gx0) * (0.06 + rand() * 0.09);
    const col = mix("#6f9a6a", "#9fbf95", rand());
    trees.push(
      `<circle cx="${tx.toFixed(1)}" cy="${(horizon - tr * 0.2).toFixed(1)}" r="${tr.toFixed(1)}" fill="${col}"/>`,
    );
  }
  const lawn = `<rect x="${gx0}" y="${horizon}" width="${gx1 - gx0}" height="${gy1 - horizon}" fill="#9dbb7f"/>`;
  s.raw(
    `<g clip-path="url(#${clip})"><polygon points="${g2.map((q) => q.join(",")).join(" ")}" fill="${sky}"/><g clip-path="url(#${clip})" opacity="0.9">${trees.join("")}${lawn}</g></g>`,
  );
  // Frame and glazing bars, at the glass plane.
  const frameW = 0.045;
  const bars: Box[] = [];
  const n = w.bars ?? 1;
  for (let i = 0; i <= n; i++) {
    const a = w.a0 + ((w.a1 - w.a0) * i) / n;
    bars.push(barAt(w, a, frameW, w.y0, w.y1, depth, L, R, D));
  }
  const drawBar = (b: Box) => s.box(b, trim, { soft: 0.4 });
  for (const b of bars) drawBar(b);
  for (const y of [w.y0, w.y1, ...(w.transom ? [w.transom] : [])]) {
    drawBar(horizontalBar(w, y, frameW, depth, L, R, D));
  }
  // Glass sheen.
  s.poly2(
    g2,
    s.gradient(
      [
        [0, "#ffffff", 0.22],
        [0.5, "#ffffff", 0.02],
        [1, "#ffffff", 0.12],
      ],
      "h",
    ),
    `clip-path="url(#${clip})"`,
  );
  // Sill.
  if (w.wall === "back") s.box(box(w.a0 - 0.06, w.a1 + 0.06, w.y0 - 0.04, w.y0, D - 0.05, D + depth), trim);
  else if (w.wall === "left") s.box(box(L, L + 0.05, w.y0 - 0.04, w.y0, w.a0 - 0.06, w.a1 + 0.06), trim);
  else s.box(box(R - 0.05, R, w.y0 - 0.04, w.y0, w.a0 - 0.06, w.a1 + 0.06), trim);

  // Daylight on the floor: the opening cast along the sun's direction.
  const sun = r.sun;
  if (sun) drawSunPatch(s, sun, at, w, floorClip);
  // A soft spill of light around the window.
  const cx = (gx0 + gx1) / 2;
  const cy = (gy0 + gy1) / 2;
  const rad = Math.max(gx1 - gx0, gy1 - gy0);
  s.raw(
    `<ellipse cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" rx="${rad.toFixed(1)}" ry="${(rad * 0.8).toFixed(1)}" fill="${s.radial(
      [
        [0, "#fffaf0", 0.28],
        [1, "#fffaf0", 0],
      ],
    )}"/>`,
  );
}

function drawSunPatch(
  s: Scene,
  sun: V3,
  at: (a: number, y: number, inset: number) => V3,
  w: WindowSpec,
  floorClip: string,
) {
  const onFloor = (q: V3): V3 => {
    const t = q[1] / -sun[1];
    return [q[0] + sun[0] * t, 0.001, q[2] + sun[2] * t];
  };
  const patch = [at(w.a0, w.y0, 0), at(w.a1, w.y0, 0), at(w.a1, w.y1, 0), at(w.a0, w.y1, 0)].map(onFloor);
  const patch2: V2[] = patch.map((q) => s.p(q));
  s.raw(
    `<g clip-path="url(#${floorClip})"><polygon points="${patch2.map((q) => q.join(",")).join(" ")}" fill="#fff6df" opacity="0.32" filter="url(#soft)"/></g>`,
  );
}

function barAt(
  w: WindowSpec,
  a: number,
  fw: number,
  y0: number,
  y1: number,
  depth: number,
  L: number,
  R: number,
  D: number,
): Box {
  if (w.wall === "back") return box(a - fw / 2, a + fw / 2, y0, y1, D + depth - 0.03, D + depth);
  if (w.wall === "left") return box(L - depth, L - depth + 0.03, y0, y1, a - fw / 2, a + fw / 2);
  return box(R + depth - 0.03, R + depth, y0, y1, a - fw / 2, a + fw / 2);
}

function horizontalBar(w: WindowSpec, y: number, fw: number, depth: number, L: number, R: number, D: number): Box {
  if (w.wall === "back") return box(w.a0, w.a1, y - fw / 2, y + fw / 2, D + depth - 0.03, D + depth);
  if (w.wall === "left") return box(L - depth, L - depth + 0.03, y - fw / 2, y + fw / 2, w.a0, w.a1);
  return box(R + depth - 0.03, R + depth, y - fw / 2, y + fw / 2, w.a0, w.a1);
}
