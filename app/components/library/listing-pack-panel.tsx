import { Form } from "react-router";
// The profiles come with the panel's data (their names only): the profiles' rules stay on the server, out of the
// dashboard's JavaScript (issue 44).
import {
  CLOSE_DAYS_DEFAULT,
  CLOSE_DAYS_MAX,
  LISTING_STATUS_NAMES,
  LISTING_STATUSES,
  type ListingStatus,
} from "~/shared/listing-status";
import { CHECK_WALLS, CONFIRM_CHECKED } from "~/shared/structure-words";

// A folder's listing: its details and MLS profile, its status, and its pack
// (docs/decisions/0111-listing-packs-and-streamed-zips.md, 0170-mls-profiles.md). Every form is a plain web form
// posted to the dashboard (or, for the pack, to the pack's address), so all of it works without JavaScript.

export interface ListingPanelData {
  address: string | null;
  mlsNumber: string | null;
  profileChoice: string;
  /** Every MLS profile a listing can follow, by id and name. */
  profiles: { id: string; name: string }[];
  profile: {
    id: string;
    name: string;
    from: "listing" | "account";
    rule: string;
    originals: string;
    needsPages: boolean;
  };
  status: ListingStatus;
  statusName: string;
  closeAfterDays: number | null;
  closeAt: number | null;
  photos: number;
  altered: number;
  unpublished: number;
  withdrawn: number;
  refused: number;
  unconfirmed: number;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export function ListingPackPanel({ folderId, listing }: { folderId: string; listing: ListingPanelData }) {
  const p = listing.profile;
  const plural = (n: number, one: string) => (n === 1 ? `1 ${one}` : `${n} ${one}s`);
  return (
    <details className="card" data-testid="listing-pack" open={listing.status === "sold" || undefined}>
      <summary className="cursor-pointer font-semibold">
        Listing, MLS profile and pack{" "}
        <span className="text-sm font-normal text-muted" data-testid="listing-status">
          ({listing.statusName}, {p.name})
        </span>
      </summary>
      <Form method="post" className="mt-3 grid gap-3 sm:grid-cols-2 sm:items-end" data-testid="listing-form">
        <input type="hidden" name="intent" value="listing" />
        <input type="hidden" name="folderId" value={folderId} />
        <label className="grid gap-1 text-sm sm:col-span-2">
          Listing address
          <input name="address" className="input" maxLength={200} defaultValue={listing.address ?? ""} />
        </label>
        <label className="grid gap-1 text-sm">
          MLS number
          <input name="mlsNumber" className="input" maxLength={40} defaultValue={listing.mlsNumber ?? ""} />
        </label>
        <label className="grid gap-1 text-sm">
          MLS profile
          <select name="profile" className="input" defaultValue={listing.profileChoice}>
            <option value="">Your account's profile</option>
            {listing.profiles.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name}
              </option>
            ))}
          </select>
        </label>
        <p className="text-xs text-muted sm:col-span-2">
          Follows {p.name}
          {p.from === "account" ? " (your account's profile)" : ""}: {p.rule}. Originals: {p.originals}.
        </p>
        <button type="submit" className="btn-secondary justify-self-start">
          Save listing
        </button>
      </Form>

      <Form
        method="post"
        className="mt-4 grid gap-3 border-t border-line pt-3 sm:grid-cols-3 sm:items-end"
        data-testid="status-form"
      >
        <input type="hidden" name="intent" value="listing-status" />
        <input type="hidden" name="folderId" value={folderId} />
        <label className="grid gap-1 text-sm">
          Status
          <select name="status" className="input" defaultValue={listing.status}>
            {LISTING_STATUSES.map((s) => (
              <option key={s} value={s}>
                {LISTING_STATUS_NAMES[s]}
              </option>
            ))}
          </select>
        </label>
        <label className="grid gap-1 text-sm">
          Close original pages after (days, once sold)
          <input
            name="closeAfterDays"
            type="number"
            min={0}
            max={CLOSE_DAYS_MAX}
            className="input"
            defaultValue={listing.closeAfterDays ?? CLOSE_DAYS_DEFAULT}
          />
        </label>
        <button type="submit" className="btn-secondary justify-self-start">
          Save status
        </button>
        <p className="text-xs text-muted sm:col-span-3" data-testid="originals-state">
          {listing.closeAt !== null
            ? `Its original pages close on ${day(listing.closeAt)}.`
            : "While a listing is active or pending its original pages stay up: California law wants the original reachable while an altered photo advertises."}
        </p>
      </Form>

      <div className="mt-4 border-t border-line pt-3">
        <p className="text-sm text-muted">
          One ZIP laid out for {p.name}: the photos to upload in order (each altered one labelled or clean as the
          profile says, its original where the profile places it), captions.csv and captions.json with each photo's
          caption and original link, and a manifest of what was done.
        </p>
        {listing.unconfirmed > 0 ? (
          <p className="alert-error mt-2 text-sm" data-testid="pack-unconfirmed">
            {plural(listing.unconfirmed, "photo")} {listing.unconfirmed === 1 ? "shows a result" : "show results"}{" "}
            marked “{CHECK_WALLS}”: open {listing.unconfirmed === 1 ? "it" : "each"}, compare with the original and
            confirm “{CONFIRM_CHECKED}” before downloading the pack.
          </p>
        ) : null}
        {listing.unpublished + listing.withdrawn + listing.refused > 0 ? (
          <p className="alert-info mt-2 text-sm" data-testid="pack-gaps">
            {listing.unpublished > 0
              ? `${plural(listing.unpublished, "altered photo")} ${listing.unpublished === 1 ? "has" : "have"} no public original page yet. `
              : ""}
            {listing.withdrawn > 0
              ? `${plural(listing.withdrawn, "original page")} ${listing.withdrawn === 1 ? "was" : "were"} withdrawn: publish ${listing.withdrawn === 1 ? "it" : "them"} again from the photo to include ${listing.withdrawn === 1 ? "it" : "them"}. `
              : ""}
            {listing.refused > 0
              ? `${plural(listing.refused, "result")} may not be published under this profile: the pack leaves ${listing.refused === 1 ? "it" : "them"} out and says why.`
              : ""}
          </p>
        ) : null}
        {/* The pack answers 409 while a flagged result is unconfirmed: the alert above says what to do first. */}
        <div className={`mt-2 flex flex-wrap gap-2 ${listing.unconfirmed > 0 ? "hidden" : ""}`}>
          {listing.unpublished > 0 ? (
            <form method="post" action={`/api/folders/${folderId}/pack`} data-testid="publish-pack">
              <input type="hidden" name="publish" value="new" />
              <button type="submit" className="btn-primary">
                Publish {plural(listing.unpublished, "original page")} and download the pack
              </button>
            </form>
          ) : null}
          <a
            href={`/api/folders/${folderId}/pack`}
            download
            className={listing.unpublished > 0 ? "btn-secondary" : "btn-primary"}
            data-testid="download-pack"
          >
            Download listing pack{listing.unpublished > 0 ? " (without publishing)" : ""}
          </a>
        </div>
      </div>
    </details>
  );
}
