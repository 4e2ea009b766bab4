// Figures the public pages quote. They are written out (not derived from the
// catalogue) so the landing page does not ship the catalogue's lists to the
// browser; test/unit/marketing.test.ts keeps them equal to app/shared/catalog.ts.

export const ROOM_TYPE_COUNT = 31;
export const DESIGN_STYLE_COUNT = 52;
/** Cheapest plan per month: paid monthly, and paid yearly. */
export const FROM_PRICE_MONTHLY = 29;
export const FROM_PRICE_YEARLY_PER_MONTH = 19;
/** Every monthly plan costs at most this per staged photo. */
export const MAX_PRICE_PER_PHOTO = 3.5;
export const CREDIT_VALIDITY_DAYS = 30;
export const UPLOAD_LIMIT_MB = 10;
export const REFUND_WINDOW_HOURS = 48;
export const REFUND_MAX_PHOTOS = 3;
export const BULK_PRICE = 16;
export const BULK_MIN = 10;
