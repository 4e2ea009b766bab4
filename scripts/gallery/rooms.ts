// The five example rooms, each drawn empty ("before") and staged ("after").
import {
  armchair,
  armchairSide,
  barStool,
  books,
  cabinet,
  diningChair,
  diningChairSide,
  floorLamp,
  pendant,
  pillow,
  pottedPlant,
  roundMirror,
  roundRug,
  roundTable,
  rug,
  sofa,
  table,
  tableLamp,
  vase,
  wallArt,
} from "./furniture.ts";
import { drawRoom, type RoomSpec } from "./room.ts";
import { box, type Camera, type Light, Scene, shade } from "./scene.ts";

export interface RoomDef {
  id: string;
  cam: Camera;
  light: Light;
  room: RoomSpec;
  stage(s: Scene): void;
}

const WARM_WHITE = "#ece7df";

const livingRoom: RoomDef = {
  id: "living-room",
  cam: { x: -0.15, y: 1.3, f: 880 },
  light: [-0.8, 0.45, -0.2],
  room: {
    w: 5.2,
    d: 5.6,
    h: 2.7,
    near: 0.4,
    wall: WARM_WHITE,
    ceiling: "#f4f2ee",
    floor: { kind: "planks", color: "#c9a27a" },
    windows: [{ wall: "left", a0: 2.3, a1: 4.7, y0: 0.45, y1: 2.35, bars: 2, transom: 1.9 }],
    sun: [0.75, -0.55, 0.25],
    seed: 11,
  },
  stage(s) {
    const D = 5.6;
    wallArt(s, -0.95, -0.1, 1.25, 2.0, D, ["#e9e2d6", "#c98b64", "#3e5c6b", "#d6b16c"], 3);
    wallArt(s, 0.1, 0.95, 1.25, 2.0, D, ["#e8e4dc", "#7f9c8a", "#2f3e46", "#e2a27a"], 9);
    pottedPlant(s, -2.15, 5.15, 1.7, { tall: true, seed: 21, potR: 0.2, potH: 0.42, pot: "#d8cfc2" });
    rug(s, -1.5, 1.6, 2.3, 4.9, "#d8d0c2", "#a89c88", 0);
    floorLamp(s, 1.85, 5.2, 1.6);
    sofa(s, -1.35, 1.55, 4.55, 5.45, {
      color: "#8d9196",
      cushions: 3,
      pillows: [{ color: "#d7c3a4" }, { color: "#3f5a66" }, { color: "#e9e3d8", pattern: "#b98a65" }],
    });
    table(s, -0.55, 0.85, 3.25, 3.85, 0.42, "#a87b54", { legs: "#2f2924", shelf: true });
    books(s, -0.35, 0.42, 3.45, 3.65, 4, 5);
    vase(s, 0.45, 0.42, 3.55, 0.09, 0.26, "#e6ddd0");
    pottedPlant(s, 0.15, 3.6, 0.34, { y: 0.42, potR: 0.06, potH: 0.12, pot: "#f1ece4", seed: 4 });
    armchairSide(s, 1.45, 2.2, 3.0, 3.8, "#c4a27e", "left");
  },
};

const bedroom: RoomDef = {
  id: "bedroom",
  cam: { x: 0.1, y: 1.45, f: 860 },
  light: [0.8, 0.45, -0.2],
  room: {
    w: 4.6,
    d: 5.0,
    h: 2.6,
    near: 0.4,
    wall: "#e6e1da",
    ceiling: "#f4f2ee",
    floor: { kind: "planks", color: "#d6bd9c", plank: 0.2 },
    windows: [{ wall: "right", a0: 2.2, a1: 3.9, y0: 0.8, y1: 2.2, bars: 1 }],
    sun: [-0.7, -0.6, 0.2],
    seed: 5,
  },
  stage(s) {
    const D = 5.0;
    wallArt(s, -1.0, -0.4, 1.45, 2.05, D, ["#efe9df", "#b7c4b0", "#5e6d5a"], 12, "#c8b79c");
    wallArt(s, -0.3, 0.3, 1.45, 2.05, D, ["#efe9df", "#d9a48a", "#6b4f45"], 14, "#c8b79c");
    wallArt(s, 0.4, 1.0, 1.45, 2.05, D, ["#efe9df", "#9fb3c8", "#3d4f63"], 16, "#c8b79c");
    pottedPlant(s, -1.95, 4.55, 1.25, { seed: 8, pot: "#c9b9a5" });
    rug(s, -1.6, 1.6, 2.2, 4.6, "#efe9e0", "#c8bca9", 2);
    // Nightstands and lamps.
    for (const x0 of [-1.65, 1.05]) {
      cabinet(s, box(x0, x0 + 0.55, 0, 0.55, 4.4, 4.85), "#b58b61", 1, { drawers: true, top: "#c39a70" });
      tableLamp(s, x0 + 0.27, 0.55, 4.62, "#d3c4ae");
    }
    // Bed.
    s.shadow(-0.95, 0.95, 2.6, 4.9, 0.45);
    s.box(box(-1.0, 1.0, 0, 1.25, 4.78, 4.92), "#a9b3b8", { soft: 5 });
    s.box(box(-0.95, 0.95, 0.05, 0.35, 2.7, 4.78), "#8f9aa0", { soft: 2 });
    s.box(box(-0.92, 0.92, 0.35, 0.58, 2.72, 4.76), "#f5f3ef", { soft: 4 });
    pillow(s, [-0.45, 0.6, 4.58], 0.72, 0.38, "#f7f6f3", -2);
    pillow(s, [0.45, 0.6, 4.58], 0.72, 0.38, "#f7f6f3", 2);
    pillow(s, [-0.3, 0.6, 4.35], 0.5, 0.32, "#c6a58a", -6);
    pillow(s, [0.3, 0.6, 4.35], 0.5, 0.32, "#7f97a6", 6, "#e8e2d8");
    s.box(box(-0.96, 0.96, 0.3, 0.66, 2.66, 4.1), "#eef0f2", { soft: 6, top: "#f4f6f8" });
    s.box(box(-0.97, 0.97, 0.32, 0.68, 2.66, 2.98), "#5f7587", { soft: 6, top: "#6d8497" });
    pottedPlant(s, 1.75, 3.3, 0.8, { seed: 19, pot: "#e6dfd4", potR: 0.15 });
  },
};

const diningRoom: RoomDef = {
  id: "dining-room",
  cam: { x: 0.05, y: 1.35, f: 860 },
  light: [0, 0.5, 0.85],
  room: {
    w: 5.0,
    d: 5.4,
    h: 2.9,
    near: 0.4,
    wall: "#f1eee8",
    ceiling: "#f5f3ef",
    floor: { kind: "planks", color: "#a77c5a", plank: 0.16 },
    windows: [
      { wall: "back", a0: -2.05, a1: -0.75, y0: 0.5, y1: 2.5, bars: 1, transom: 2.0 },
      { wall: "back", a0: 0.75, a1: 2.05, y0: 0.5, y1: 2.5, bars: 1, transom: 2.0 },
    ],
    sun: [0.1, -0.85, -0.45],
    trim: "#f3f1ec",
    seed: 17,
  },
  stage(s) {
    const D = 5.4;
    roundMirror(s, 0, 1.65, 0.38, D);
    cabinet(s, box(-0.6, 0.6, 0, 0.8, 4.95, 5.38), "#6e5240", 3, { top: "#7a5b47", handle: "#c7a86c" });
    vase(s, -0.35, 0.8, 5.15, 0.08, 0.3, "#d9d2c6");
    pottedPlant(s, 0.35, 5.15, 0.5, { y: 0.8, potR: 0.08, potH: 0.16, pot: "#efe9df", seed: 41 });
    pottedPlant(s, -2.1, 4.9, 1.5, { tall: true, seed: 2, pot: "#d6ccbe" });
    rug(s, -1.75, 1.75, 2.1, 4.9, "#cfc3b0", "#8d7b66", 0);
    for (const x of [-0.75, 0.05, 0.85]) diningChair(s, x - 0.22, x + 0.22, 4.1, 4.55, "#c9b9a1", "#4a3a2e", "far");
    diningChairSide(s, -1.6, -1.15, 3.3, 3.75, "#c9b9a1", "#4a3a2e", "left");
    diningChairSide(s, 1.15, 1.6, 3.3, 3.75, "#c9b9a1", "#4a3a2e", "right");
    table(s, -1.1, 1.1, 3.0, 4.05, 0.76, "#7b5a41", { legs: "#4c3829", thick: 0.05, leg: 0.07, inset: 0.12 });
    vase(s, 0.0, 0.76, 3.55, 0.1, 0.32, "#f1ede6");
    s.foliage([0.0, 1.04, 3.55], 0.35, {
      seed: 77,
      leaves: 18,
      spread: 1.6,
      leafLen: 0.1,
      colors: ["#6b8f5e", "#e9d9b8", "#d98f77", "#f3efe6"],
    });
    for (const [x, z] of [
      [-0.6, 3.35],
      [0.6, 3.75],
    ] as const)
      s.cylinder(x, z, 0.05, 0.05, 0.76, 0.78, "#d8d2c8");
    pendant(s, 0, 3.55, 2.9, 1.0, "#2e2b28", 0.3, "dome");
  },
};

const kitchenShell = (s: Scene, staged: boolean) => {
  const D = 5.0;
  // Tiled splashback between the counter and the wall cabinets.
  s.poly(
    [
      [-2.5, 0.92, D - 0.001],
      [2.5, 0.92, D - 0.001],
      [2.5, 1.5, D - 0.001],
      [-2.5, 1.5, D - 0.001],
    ],
    "#eef0ee",
  );
  for (let y = 1.0; y < 1.5; y += 0.075) s.line([-2.5, y, D - 0.002], [2.5, y, D - 0.002], "#cfd5d2", 1);
  cabinet(s, box(-2.5, -0.75, 1.5, 2.3, D - 0.35, D), "#f4f3ef", 3, { top: undefined });
  cabinet(s, box(0.75, 1.65, 1.5, 2.3, D - 0.35, D), "#f4f3ef", 2);
  cabinet(s, box(-2.5, 1.65, 0, 0.88, D - 0.62, D), "#f4f3ef", 7, { drawers: true });
  s.box(box(-2.52, 1.65, 0.88, 0.93, D - 0.65, D), "#d9d6d0", { top: "#e7e4de" });
  // Oven front and the sink.
  s.poly(
    [
      [0.55, 0.1, D - 0.625],
      [1.15, 0.1, D - 0.625],
      [1.15, 0.65, D - 0.625],
      [0.55, 0.65, D - 0.625],
    ],
    "#2d2d2f",
  );
  s.box(box(-0.35, 0.35, 0.93, 0.94, D - 0.55, D - 0.12), "#b8bcbf");
  s.line([0, 0.94, D - 0.1], [0, 1.22, D - 0.1], "#9aa0a4", 4);
  s.line([0, 1.22, D - 0.1], [0, 1.2, D - 0.3], "#9aa0a4", 4);
  // Refrigerator.
  s.box(box(1.7, 2.5, 0, 2.2, D - 0.7, D), "#c9cdd0", { top: "#d8dbde" });
  s.line([1.78, 1.35, D - 0.701], [1.78, 2.0, D - 0.701], "#8f969b", 3);
  s.line([1.78, 0.2, D - 0.701], [1.78, 1.2, D - 0.701], "#8f969b", 3);
  s.line([1.7, 1.28, D - 0.701], [2.5, 1.28, D - 0.701], "#a4aaae", 1.5);
  if (staged) {
    vase(s, -1.9, 0.93, 4.75, 0.1, 0.22, "#c4b39a");
    vase(s, -1.65, 0.93, 4.75, 0.07, 0.3, "#e4e0d8");
    pottedPlant(s, -1.2, 4.75, 0.42, { y: 0.93, potR: 0.07, potH: 0.14, pot: "#f0ebe3", seed: 61 });
    s.box(box(0.6, 0.98, 0.93, 0.95, 4.55, 4.8), "#a77b50");
    vase(s, 1.35, 0.93, 4.75, 0.09, 0.2, "#3e4a4f");
  }
  // Island.
  s.shadow(-1.3, 1.3, 2.9, 3.8, 0.35);
  cabinet(s, box(-1.25, 1.25, 0, 0.9, 2.95, 3.8), "#46606e", 4, { drawers: true, handle: "#c7a86c", shadow: false });
  s.box(box(-1.35, 1.35, 0.9, 0.95, 2.85, 3.85), "#eceae6", { top: "#f3f2ef" });
};

const kitchen: RoomDef = {
  id: "kitchen",
  cam: { x: 0.0, y: 1.4, f: 860 },
  light: [0.1, 0.5, 0.85],
  room: {
    w: 5.0,
    d: 5.0,
    h: 2.7,
    near: 0.4,
    wall: "#e7e5e0",
    ceiling: "#f5f4f1",
    floor: { kind: "planks", color: "#b99470", plank: 0.2 },
    windows: [{ wall: "back", a0: -0.7, a1: 0.7, y0: 1.12, y1: 2.25, bars: 2 }],
    seed: 29,
  },
  stage(s) {
    // Counter and island styling, stools, pendants.
    s.box(box(-0.5, -0.1, 0.95, 0.97, 3.15, 3.45), "#a77b50");
    vase(s, 0.35, 0.95, 3.35, 0.16, 0.1, "#f2eee8");
    for (const [dx, c] of [
      [-0.06, "#e0a33b"],
      [0.05, "#c2452d"],
      [0.0, "#8fb24a"],
    ] as const) {
      const [x, y] = s.p([0.35 + dx, 1.06, 3.35]);
      s.raw(
        `<circle cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="${(0.045 * s.scale(3.35)).toFixed(1)}" fill="${c}"/>`,
      );
    }
    pottedPlant(s, 0.95, 3.35, 0.5, { y: 0.95, potR: 0.08, potH: 0.16, pot: "#efe9df", seed: 52 });
    for (const x of [-0.8, 0, 0.8]) pendant(s, x, 3.3, 2.7, 0.8, "#1f2a30", 0.1, "globe");
    for (const x of [-0.85, 0.0, 0.85]) barStool(s, x, 2.55, "#8a6446");
  },
};

const openPlan: RoomDef = {
  id: "open-plan",
  cam: { x: 0.2, y: 1.3, f: 900 },
  light: [-0.4, 0.45, 0.8],
  room: {
    w: 6.4,
    d: 6.2,
    h: 2.8,
    near: 0.4,
    wall: "#ebe8e2",
    ceiling: "#f6f4f0",
    floor: { kind: "planks", color: "#cfae88", plank: 0.2 },
    windows: [{ wall: "back", a0: -2.8, a1: 0.9, y0: 0.12, y1: 2.5, bars: 3, transom: 2.1 }],
    sun: [0.35, -0.55, -0.75],
    seed: 3,
  },
  stage(s) {
    const D = 6.2;
    // Shelving on the back wall.
    const sx0 = 1.35;
    const sx1 = 2.95;
    s.shadow(sx0, sx1, D - 0.38, D, 0.25, 0.03);
    for (const x of [sx0, sx1 - 0.04]) s.box(box(x, x + 0.04, 0, 2.0, D - 0.36, D - 0.02), "#7c5a3f");
    for (const y of [0, 0.5, 1.0, 1.5, 1.96])
      s.box(box(sx0, sx1, y, y + 0.04, D - 0.36, D - 0.02), "#8a6547", { top: "#98714f" });
    books(s, sx0 + 0.08, 0.04, D - 0.3, D - 0.1, 9, 3);
    vase(s, 2.5, 0.04, D - 0.2, 0.1, 0.28, "#cfd8d6");
    books(s, sx0 + 0.7, 0.54, D - 0.3, D - 0.1, 12, 8);
    vase(s, sx0 + 0.25, 0.54, D - 0.2, 0.08, 0.22, "#b86f52");
    pottedPlant(s, sx0 + 0.3, D - 0.2, 0.45, { y: 1.04, potR: 0.08, potH: 0.15, pot: "#efe9df", seed: 90 });
    books(s, sx0 + 0.75, 1.04, D - 0.3, D - 0.1, 7, 12);
    vase(s, sx0 + 0.5, 1.54, D - 0.2, 0.09, 0.3, "#3f4b50");
    books(s, sx0 + 0.9, 1.54, D - 0.3, D - 0.1, 6, 21);
    pottedPlant(s, -3.0, 5.75, 1.9, { tall: true, seed: 44, potR: 0.22, potH: 0.45, pot: "#cbbfae" });
    roundRug(s, -0.55, 4.0, 1.45, "#e3dbcf", "#c0b39f");
    // Sectional sofa: the long part under the window, the chaise towards us.
    sofa(s, -2.6, 0.55, 5.0, 5.9, {
      color: "#5b7080",
      cushions: 3,
      pillows: [
        { color: "#e8dcc8" },
        { color: "#d8a47f" },
        { color: "#f1ece3", pattern: "#5b7080" },
        { color: "#c9a66b" },
      ],
    });
    s.shadow(-2.6, -1.75, 3.7, 5.0, 0.4);
    s.box(box(-2.6, -1.75, 0.1, 0.3, 3.7, 5.0), shade("#5b7080", 0.9), { soft: 1 });
    s.box(box(-2.6, -1.75, 0.3, 0.44, 3.72, 5.02), shade("#5b7080", 1.04), { soft: 5 });
    s.box(box(-2.6, -2.4, 0.1, 0.62, 3.7, 5.0), "#5b7080", { soft: 4 });
    s.box(box(-2.35, -1.8, 0.44, 0.47, 3.9, 4.4), "#e4d6bf", { soft: 4 });
    roundTable(s, -0.55, 3.95, 0.5, 0.4, "#d9cbb7", "#8a7560");
    vase(s, -0.7, 0.4, 3.9, 0.07, 0.24, "#5f7d74");
    books(s, -0.45, 0.4, 3.8, 4.05, 3, 30);
    armchair(s, 1.05, 1.85, 3.3, 4.1, "#7e8d7a", "#e6dccd");
    floorLamp(s, 2.25, 4.3, 1.55, "#efe6d6");
  },
};

export const ROOMS: RoomDef[] = [livingRoom, bedroom, diningRoom, kitchen, openPlan];

export function render(def: RoomDef, staged: boolean, width: number, height: number): string {
  const s = new Scene(def.cam, def.light);
  drawRoom(s, def.room);
  if (def.id === "kitchen") kitchenShell(s, staged);
  if (staged) def.stage(s);
  // A gentle vignette, as a real lens gives.
  s.raw(
    `<rect x="0" y="0" width="1440" height="960" fill="${s.radial(
      [
        [0.6, "#000000", 0],
        [1, "#000000", 0.22],
      ],
      0.5,
      0.5,
      0.75,
    )}"/>`,
  );
  return s.svg(width, height);
}
