// The two phrases of a flagged result (docs/decisions/0215-flag-when-unsure.md), on their own so that /dashboard's
// listing panel can name them without bringing the rest of version-view.ts (the staging dialogs' messages) into the
// dashboard's first JavaScript: a module the route imports statically lands in a chunk the route loads, whole
// (docs/decisions/0308-dashboard-bundle-margin.md). version-view.ts re-exports both.

/** What a flagged result says first, wherever it is shown. */
export const CHECK_WALLS = "Check the walls and windows";
/** What its owner confirms before a flagged result goes into a listing. */
export const CONFIRM_CHECKED = "I checked the walls and windows";
