// What an upload may be (docs/decisions/0040): kept apart from the catalog (app/shared/catalog.ts re-exports them),
// so the dashboard's upload panel, which needs only these, does not load the plans and styles (issue 44).

export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const ACCEPTED_UPLOAD_TYPES = ["image/jpeg", "image/png"] as const;
