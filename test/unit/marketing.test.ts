import { describe, expect, it } from "vitest";
import * as m from "~/lib/marketing";
import {
  BULK_MIN_PROPERTIES,
  BULK_PRICE_PER_PROPERTY,
  DESIGN_STYLES,
  MAX_UPLOAD_BYTES,
  PLANS,
  ROOM_TYPES,
} from "~/shared/catalog";

describe("figures quoted on the public pages", () => {
  it("match the catalogue", () => {
    expect(m.ROOM_TYPE_COUNT).toBe(ROOM_TYPES.length);
    expect(m.DESIGN_STYLE_COUNT).toBe(DESIGN_STYLES.length);
    expect(m.FROM_PRICE_MONTHLY).toBe(Math.min(...PLANS.map((p) => p.price)));
    expect(m.FROM_PRICE_YEARLY_PER_MONTH).toBe(Math.min(...PLANS.map((p) => p.yearlyPrice / 12)));
    expect(Math.max(...PLANS.map((p) => p.price / p.credits))).toBeLessThanOrEqual(m.MAX_PRICE_PER_PHOTO);
    expect(m.UPLOAD_LIMIT_MB * 1024 * 1024).toBe(MAX_UPLOAD_BYTES);
    expect(m.BULK_PRICE).toBe(BULK_PRICE_PER_PROPERTY);
    expect(m.BULK_MIN).toBe(BULK_MIN_PROPERTIES);
  });
});
