import { Form } from "react-router";
import { LOOK_STRENGTHS, type LookView, lookStrengthLabel } from "~/shared/listing-look";

// A folder's look (docs/decisions/0190-one-look-for-a-listing.md): the staged version every photo of the folder
// staged from now on follows, how closely, and Clear. Plain forms of /dashboard: they work without JavaScript.

export function ListingLookPanel({ folderId, look }: { folderId: string; look: LookView | null }) {
  if (!look) {
    return (
      <p className="text-sm text-muted" data-testid="listing-look-none">
        One look for the whole listing: open a staged photo of this folder and choose “Use this look for the listing”.
      </p>
    );
  }
  return (
    <section
      className="card flex flex-wrap items-center gap-3 p-3"
      aria-label="Listing look"
      data-testid="listing-look"
    >
      <img src={look.thumbUrl} alt="The listing's look" className="h-16 w-24 shrink-0 rounded object-cover" />
      <div className="min-w-0 flex-1 space-y-1 text-sm">
        <p className="font-semibold">Listing look</p>
        {look.trashed ? (
          <p className="text-amber-800" data-testid="listing-look-trashed">
            Its photo is in the trash, so photos are staged without it. Restore the photo to use it again.
          </p>
        ) : (
          <p data-testid="listing-look-strength">
            Photos of this folder staged from now on follow it: {lookStrengthLabel(look.strength)}.
          </p>
        )}
        <div className="flex flex-wrap items-end gap-2">
          <Form method="post" className="flex items-end gap-2">
            <input type="hidden" name="intent" value="look-strength" />
            <input type="hidden" name="folderId" value={folderId} />
            <label className="grid gap-1">
              <span className="text-xs text-muted">How closely</span>
              <select name="strength" defaultValue={String(look.strength)} className="input min-h-9 py-1 text-sm">
                {LOOK_STRENGTHS.map((s) => (
                  <option key={s.value} value={String(s.value)}>
                    {s.name} ({s.value}): {s.help}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="btn-secondary min-h-9 px-3 py-1">
              Save
            </button>
          </Form>
          <Form method="post">
            <input type="hidden" name="intent" value="clear-look" />
            <input type="hidden" name="folderId" value={folderId} />
            <button type="submit" className="btn-ghost min-h-9 px-3 py-1" data-testid="clear-look">
              Clear
            </button>
          </Form>
        </div>
      </div>
    </section>
  );
}
