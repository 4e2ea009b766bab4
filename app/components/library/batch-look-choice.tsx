import { LOOK_STRENGTHS, type LookView, lookStrengthLabel } from "~/shared/listing-look";

// The new-batch form's listing look (docs/decisions/0190-one-look-for-a-listing.md): shown before starting, kept
// by default, its strength changed for this batch, or not used for it. Plain form fields: no JavaScript needed.

export function BatchLookChoice({
  look,
  photos,
  chosen,
}: {
  /** The folder's look, on a folder's page. */
  look: LookView | null;
  /** How many of the photos offered follow a look. */
  photos: number;
  /** The choices the form was sent with, when the server asks to confirm a new total. */
  chosen?: { look: string; lookStrength: string } | null;
}) {
  if (photos === 0) {
    return look?.trashed ? (
      <p className="alert-info" data-testid="batch-look-trashed">
        The listing's look is a photo in the trash: this batch is staged without it. Restore the photo to use it.
      </p>
    ) : null;
  }
  const strength = chosen?.lookStrength ?? (look ? String(look.strength) : "");
  return (
    <fieldset className="card space-y-2 p-3 text-sm" data-testid="batch-look">
      <legend className="px-1 font-semibold">Listing look</legend>
      <div className="flex items-center gap-3">
        {look ? (
          <img src={look.thumbUrl} alt="The listing's look" className="h-14 w-20 shrink-0 rounded object-cover" />
        ) : null}
        <p>
          {look
            ? `Every photo is staged to follow this look (${lookStrengthLabel(look.strength)}) unless you say otherwise.`
            : `${photos} of these ${photos === 1 ? "photo is" : "photos are"} in a listing with a look and follow it.`}
        </p>
      </div>
      <label className="flex items-center gap-2">
        <input type="radio" name="look" value="listing" defaultChecked={chosen?.look !== "none"} />
        Use the listing's look
      </label>
      <label className="flex items-center gap-2">
        <input type="radio" name="look" value="none" defaultChecked={chosen?.look === "none"} />
        Not for this batch
      </label>
      <label className="grid gap-1">
        <span className="text-xs text-muted">How closely, for this batch</span>
        <select
          name="lookStrength"
          defaultValue={strength}
          className="input min-h-9 py-1"
          data-testid="batch-look-strength"
        >
          {look ? null : <option value="">Each listing's own strength</option>}
          {LOOK_STRENGTHS.map((s) => (
            <option key={s.value} value={String(s.value)}>
              {s.name} ({s.value}): {s.help}
            </option>
          ))}
        </select>
      </label>
    </fieldset>
  );
}
