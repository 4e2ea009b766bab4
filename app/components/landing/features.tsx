import { Icon, type IconName } from "~/components/icons";
import { useRevealOnce } from "~/components/reveal";
import { DESIGN_STYLE_COUNT, MAX_PRICE_PER_PHOTO, ROOM_TYPE_COUNT } from "~/lib/marketing";

export const FEATURES: { icon: IconName; title: string; text: string }[] = [
  {
    icon: "camera",
    title: "Professional Photography",
    text: "Staging keeps your photo's light, perspective and architecture, so staged rooms sit naturally beside the rest of your listing.",
  },
  {
    icon: "sofa",
    title: "Virtual Staging",
    text: `Furnish empty rooms in ${ROOM_TYPE_COUNT} room types, from living rooms to offices and patios. Clear out old furniture first with furniture removal.`,
  },
  {
    icon: "shield",
    title: "Quality Guarantee",
    text: "Not the look you wanted? Try another style. If a photo fails to process, its credit comes back to you automatically.",
  },
  {
    icon: "clock",
    title: "Quick Turnaround",
    text: "Staged photos usually arrive in under a minute. Close the page and the result still lands in your library.",
  },
  {
    icon: "sparkles",
    title: "AI-Powered Magic",
    text: "Furniture scaled to the room and placed where it belongs, plus sky replacement for exteriors: day, dusk or night.",
  },
  {
    icon: "palette",
    title: "Custom Styles",
    text: `Choose from ${DESIGN_STYLE_COUNT} design styles, from Scandinavian and Japandi to Mid-Century Modern and Coastal.`,
  },
  {
    icon: "eye",
    title: "Instant Preview",
    text: "See the staged result the moment it is ready, next to your original, and download it at full size.",
  },
];

export function FeatureGrid() {
  const ref = useRevealOnce<HTMLUListElement>(0.1);
  return (
    <ul
      ref={ref}
      data-reveal-once
      className="mt-12 grid gap-6 sm:grid-cols-2 lg:grid-cols-3 lg:[&>li:last-child]:col-start-2"
      data-testid="feature-cards"
    >
      {FEATURES.map((f) => (
        <li key={f.title} className="card">
          <span className="inline-flex h-11 w-11 items-center justify-center rounded-xl bg-brand-50 text-brand-700">
            <Icon name={f.icon} className="h-6 w-6" />
          </span>
          <h3 className="mt-4 text-lg font-semibold">{f.title}</h3>
          <p className="mt-2 text-muted">{f.text}</p>
        </li>
      ))}
    </ul>
  );
}

const PAIRS: [ours: string, ourText: string, theirs: string, theirText: string][] = [
  ["Fast", "Results usually in under a minute", "Slow", "Days of waiting for a designer"],
  ["Simple", "Upload, pick a room and a style", "Complicated", "Quotes, briefs and back-and-forth"],
  ["Affordable", `Under $${MAX_PRICE_PER_PHOTO.toFixed(2)} per photo`, "Expensive", "$20+ per photo"],
  // Claims the code keeps (docs/product.md, "A number on a public page"): the free re-roll and the MLS disclosure.
  [
    "Free Re-roll",
    "One free re-roll per staged photo, then a credit each",
    "Limited",
    "One or two revisions, then fees",
  ],
  ["Accurate", "Walls, windows and floors stay as they are", "Inconsistent", "Results vary from designer to designer"],
  [
    "Free Usage",
    "Use staged photos in listings, print and social",
    "Unclear Rights",
    "Licences that limit where photos go",
  ],
  [
    "MLS Disclosure Built In",
    "Labelled downloads and a page with the original, for your MLS's rules",
    "Overdone",
    "Over-edited rooms that mislead buyers",
  ],
];

export function Comparison() {
  const brand = "Stagewise";
  return (
    <div className="mt-10 overflow-hidden rounded-2xl border border-line shadow-sm">
      <table className="w-full table-fixed border-collapse text-left">
        <caption className="sr-only">{brand} compared with traditional staging services, point by point</caption>
        <thead>
          <tr>
            <th scope="col" className="bg-brand-700 px-4 py-4 text-base font-semibold text-white sm:px-6">
              {brand}
            </th>
            <th scope="col" className="bg-slate-100 px-4 py-4 text-base font-semibold text-ink sm:px-6">
              Traditional Services
            </th>
          </tr>
        </thead>
        <tbody>
          {PAIRS.map(([ours, ourText, theirs, theirText]) => (
            <tr key={ours} className="border-t border-line">
              <td className="bg-brand-50/60 px-4 py-4 align-top sm:px-6">
                <p className="flex items-center gap-2 font-semibold text-brand-800">
                  <Icon name="check" className="h-5 w-5 shrink-0 text-success" />
                  {ours}
                </p>
                <p className="mt-1 text-sm text-muted">{ourText}</p>
              </td>
              <td className="px-4 py-4 align-top sm:px-6">
                <p className="flex items-center gap-2 font-semibold">
                  <Icon name="x" className="h-5 w-5 shrink-0 text-danger" />
                  {theirs}
                </p>
                <p className="mt-1 text-sm text-muted">{theirText}</p>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
