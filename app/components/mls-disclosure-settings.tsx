import { Form } from "react-router";
import {
  CORNER_NAMES,
  LABEL_CORNERS,
  LABEL_SIZES,
  LABEL_TEXT_MAX,
  LABEL_TONES,
  type LabelDefaults,
} from "~/shared/label-options";
import { MLS_PROFILES, type MlsProfile, PLACEMENT_NAMES, sourceLine } from "~/shared/mls-profiles";

// The account's MLS profile and the label's look (docs/decisions/0170-mls-profiles.md): a plain form, so it works
// without JavaScript. Each profile says what it does and what we cannot check for it; a listing may pick another.

/** What a profile does, in one paragraph: label or not, captions, remarks, originals, and what is not checked. */
export function ProfileSummary({ profile }: { profile: MlsProfile }) {
  return (
    <span className="block text-xs text-muted">
      <span className="block">Rule: {sourceLine(profile)}.</span>
      <span className="block">
        {profile.label
          ? `Label on the photo: “${profile.label.statement.stage}”${profile.label.originalLine ? ", and where the original is (short link and QR code)" : ""}.`
          : "Nothing on the photo."}{" "}
        Caption: “{profile.captions.stage.replace("{link}", "link to the original")}”.
        {profile.remarks ? ` Listing remarks: “${profile.remarks}”.` : ""} Originals:{" "}
        {PLACEMENT_NAMES[profile.original]}.
      </span>
      {profile.unchecked.length ? <span className="block">We cannot check: {profile.unchecked.join(" ")}</span> : null}
    </span>
  );
}

export function DisclosureSettingsSection({ defaults, busy }: { defaults: LabelDefaults; busy: boolean }) {
  return (
    <section className="card mt-6" aria-labelledby="label-title">
      <h2 id="label-title" className="text-lg font-semibold">
        MLS disclosure
      </h2>
      <p className="mt-1 text-sm text-muted">
        Pick the rules your listings follow. Download for MLS and listing packs then carry the disclosure your MLS asks
        for: a label and QR code on the photo where it is allowed, captions and remarks where it is not, the originals
        where the MLS wants them. A listing can follow another profile (in its folder). Originals are never labelled.
      </p>
      <Form method="post" className="mt-4 grid gap-3 sm:grid-cols-2" data-testid="label-form">
        <input type="hidden" name="intent" value="label" />
        <fieldset className="space-y-2 sm:col-span-2" data-testid="profile-choice">
          <legend className="text-sm font-medium">MLS profile</legend>
          {MLS_PROFILES.map((p) => (
            <label key={p.id} className="flex items-start gap-2 rounded-lg border border-line p-2">
              <input
                type="radio"
                name="profile"
                value={p.id}
                defaultChecked={defaults.profile === p.id}
                className="mt-1"
                required
              />
              <span>
                <span className="block text-sm font-semibold">{p.name}</span>
                <ProfileSummary profile={p} />
              </span>
            </label>
          ))}
        </fieldset>
        <p className="text-sm text-muted sm:col-span-2">
          The label's look, for profiles that put a label on the photo. Leave the text empty to use the profile's
          wording. Your text must say the photo was altered ("Virtually staged", "Digitally altered"); it replaces the
          first line of a staged photo's label only: sky and removal results keep the profile's wording, and the line
          saying where the original is always stays.
        </p>
        <label className="sm:col-span-2">
          <span className="text-sm font-medium">Text</span>
          <input
            name="text"
            className="input mt-1 w-full"
            defaultValue={defaults.text ?? ""}
            maxLength={LABEL_TEXT_MAX}
            placeholder="The profile's wording"
          />
        </label>
        <label>
          <span className="text-sm font-medium">Corner</span>
          <select name="corner" className="input mt-1 w-full" defaultValue={defaults.corner}>
            {LABEL_CORNERS.map((c) => (
              <option key={c} value={c}>
                {CORNER_NAMES[c]}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="text-sm font-medium">Size</span>
          <select name="size" className="input mt-1 w-full" defaultValue={defaults.size}>
            {LABEL_SIZES.map((s) => (
              <option key={s} value={s}>
                {s[0]?.toUpperCase()}
                {s.slice(1)}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span className="text-sm font-medium">Style</span>
          <select name="tone" className="input mt-1 w-full" defaultValue={defaults.tone}>
            {LABEL_TONES.map((t) => (
              <option key={t} value={t}>
                {t === "dark" ? "Dark box, white text" : "Light box, dark text"}
              </option>
            ))}
          </select>
        </label>
        <label className="flex items-center gap-2 self-end">
          <input type="checkbox" name="qr" defaultChecked={defaults.qr} /> QR code to the original
        </label>
        <div className="sm:col-span-2">
          <button type="submit" className="btn-primary" disabled={busy}>
            Save disclosure
          </button>
        </div>
      </Form>
    </section>
  );
}
