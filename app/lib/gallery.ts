// The before/after examples that ship with the app (public/gallery/, made by
// scripts/make-gallery-images.ts). Every picture exists in IMAGE_WIDTHS, 3:2.

export const IMAGE_WIDTHS = [480, 720, 960, 1440] as const;
export const IMAGE_WIDTH = 1440;
export const IMAGE_HEIGHT = 960;

export interface BeforeAfter {
  id: string;
  title: string;
  /** Base file names under /gallery/, without the width suffix. */
  before: string;
  after: string;
  beforeAlt: string;
  afterAlt: string;
}

export function imageSrc(name: string, width: (typeof IMAGE_WIDTHS)[number] = 960): string {
  return `/gallery/${name}-${width}.jpg`;
}

export function imageSrcSet(name: string): string {
  return IMAGE_WIDTHS.map((w) => `${imageSrc(name, w)} ${w}w`).join(", ");
}

const pair = (id: string, title: string, beforeAlt: string, afterAlt: string): BeforeAfter => ({
  id,
  title,
  before: `${id}-before`,
  after: `${id}-after`,
  beforeAlt,
  afterAlt,
});

export const LIVING_ROOM = pair(
  "living-room",
  "Modern Living Room",
  "an empty living room with a large window and light wood floor",
  "the same room with a grey sofa, armchair, rug, coffee table, floor lamp, plants and wall art",
);

export const BEDROOM = pair(
  "bedroom",
  "Cozy Bedroom",
  "an empty bedroom with a window and carpet",
  "the same room with a made double bed, bedside tables and lamps, a rug, a plant and framed prints",
);

export const DINING_ROOM = pair(
  "dining-room",
  "Elegant Dining Room",
  "an empty dining room with tall windows",
  "the same room with a wooden table for six, upholstered chairs, a pendant light, a sideboard and a mirror",
);

export const KITCHEN = pair(
  "kitchen",
  "Kitchen",
  "an empty kitchen with white cabinets and a bare island",
  "the same kitchen with bar stools, pendant lights, a fruit bowl, plants and styled shelves",
);

export const OPEN_PLAN = pair(
  "open-plan",
  "Open-Plan Living Room",
  "an empty open-plan living space with a wide window",
  "the same space with a sectional sofa, lounge chair, round rug, shelving, plants and a reading lamp",
);

/** The hero picture: a staged room, shown large above the fold. */
export const HERO_IMAGE = { name: OPEN_PLAN.after, alt: "Illustration of a virtually staged open-plan living room" };

/** /gallery: three 300px sliders, then two 400px featured ones. */
export const GALLERY_ITEMS: readonly BeforeAfter[] = [BEDROOM, LIVING_ROOM, DINING_ROOM];
export const FEATURED_ITEMS: readonly BeforeAfter[] = [KITCHEN, OPEN_PLAN];
