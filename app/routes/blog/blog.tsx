import { Link } from "react-router";
import { Article } from "~/components/article";
import { CompareSlider } from "~/components/compare-slider";
import { BEDROOM } from "~/lib/gallery";
import { DESIGN_STYLE_COUNT } from "~/lib/marketing";
import { PLANS } from "~/shared/catalog";
import type { Route } from "./+types/blog";

export const meta: Route.MetaFunction = () => [
  { title: "Staging an apartment: physical, DIY or virtual? · Stagewise blog" },
  {
    name: "description",
    content:
      "The three ways to stage an apartment for sale or rent, what each costs in money and time, and when to use which.",
  },
];

const small = PLANS[0]!;
const starter = PLANS[1]!;

export default function Blog() {
  return (
    <Article
      title="Staging an Apartment: Physical, DIY or Virtual?"
      backLabel="Go Back"
      intro="A practical guide for agents and owners who want an empty apartment to sell or rent faster."
    >
      <p>
        Buyers and tenants decide within seconds of seeing the first photo whether a listing is worth a visit. An empty
        apartment photographs badly: rooms look smaller, their purpose is unclear and the eye has nowhere to rest.
        Staging fixes that. There are three ways to do it, and they differ a lot in cost, time and effort.
      </p>

      <h2>1. Physical staging</h2>
      <p>
        A staging company brings in furniture, rugs, art and accessories, arranges them and takes them away after the
        sale. It looks great in photos and in person, and it helps at open houses.
      </p>
      <ul>
        <li>
          <strong>Cost:</strong> usually a design fee plus a monthly furniture rental, often several thousand dollars
          for a single apartment.
        </li>
        <li>
          <strong>Time:</strong> scheduling, delivery and set-up take days to weeks, and the furniture must be moved in
          and out, which can be hard in buildings with small lifts or strict move-in rules.
        </li>
        <li>
          <strong>Best for:</strong> high-end properties where in-person viewings carry the sale.
        </li>
      </ul>

      <h2>2. DIY staging</h2>
      <p>
        You furnish the apartment yourself, with the owner's furniture or a few bought or borrowed pieces. It costs
        little in money but a lot in time, and the result depends on your eye for design and the furniture you can get.
        A half-furnished room can look worse than an empty one.
      </p>

      <h2>3. Virtual staging</h2>
      <p>
        You photograph the empty apartment and furnish the photos digitally. With AI virtual staging this takes seconds
        per photo: upload a picture, choose the room type and one of {DESIGN_STYLE_COUNT} design styles, and download
        the staged version.
      </p>
      <CompareSlider item={BEDROOM} sizes="(min-width: 800px) 720px, calc(100vw - 2rem)" className="mt-6" />
      <ul>
        <li>
          <strong>Cost:</strong> on Stagewise the {small.name} is ${small.price} a month for {small.credits} photos (one
          property), and the {starter.name} ${starter.price} a month for {starter.credits} photos (two properties); paid
          yearly, plans start at ${(small.yearlyPrice / 12).toFixed(0)} a month. See <Link to="/plans">all plans</Link>.
        </li>
        <li>
          <strong>Time:</strong> usually under a minute per photo, any time of day.
        </li>
        <li>
          <strong>Flexibility:</strong> show the same living room as Scandinavian for young buyers and Traditional for
          downsizers, or clear out the owner's furniture first with furniture removal.
        </li>
        <li>
          <strong>Limits:</strong> the furniture exists only in the photos, so visitors see an empty apartment. Say in
          the listing that photos are virtually staged (most MLSs require it), and show the empty original next to the
          staged one.
        </li>
      </ul>

      <h2>Which should you choose?</h2>
      <p>
        For most apartments, virtual staging gives the best return: listing-ready photos the same day for a fraction of
        the cost of physical staging. Physical staging still makes sense for luxury properties that sell through
        viewings. Whatever you choose, start with good photos: level, bright, wide shots of clean, empty rooms.
      </p>

      <h2>Tips for photographing an apartment for virtual staging</h2>
      <ol>
        <li>Shoot in daylight with every light on, and open the blinds.</li>
        <li>Hold the camera at chest height and keep vertical lines vertical.</li>
        <li>Stand in a corner to show as much of the room as possible.</li>
        <li>Remove clutter, cables and personal items, or use furniture removal.</li>
        <li>Take one photo per room for each angle you want staged.</li>
      </ol>
    </Article>
  );
}
