import { Link } from "react-router";
import type { FaqItem } from "~/components/faq";
import {
  BULK_MIN,
  BULK_PRICE,
  CREDIT_VALIDITY_DAYS,
  DESIGN_STYLE_COUNT,
  REFUND_MAX_PHOTOS,
  REFUND_WINDOW_HOURS,
  ROOM_TYPE_COUNT,
  UPLOAD_LIMIT_MB,
} from "~/lib/marketing";

const link = "font-medium text-brand-700 underline";

export function landingFaq(supportEmail: string): FaqItem[] {
  return [
    {
      q: "What is virtual staging?",
      a: "Virtual staging furnishes a photo of an empty room digitally. You upload the photo, pick the room type and a design style, and receive the same room with realistic furniture and decor, ready for your listing.",
    },
    {
      q: "How fast will I get my staged photos?",
      a: "Most photos are usually ready in under a minute; we wait up to two minutes for the AI before returning your credit. If you close the page while a photo is processing, the job keeps running and the result appears in your library.",
    },
    {
      q: "How do credits work?",
      a: (
        <>
          One credit processes one image: a staging, a sky replacement or a furniture removal. Your plan adds credits
          every month, and each batch is valid for {CREDIT_VALIDITY_DAYS} days; the credits that expire first are used
          first. See{" "}
          <Link className={link} to="/plans">
            the plans
          </Link>
          .
        </>
      ),
    },
    {
      q: "What happens if a photo fails to process?",
      a: "A credit is set aside when you start and only used once your staged photo is delivered. If processing fails or times out, the credit goes straight back to your balance.",
    },
    {
      q: "Which rooms and design styles can I choose?",
      a: `${ROOM_TYPE_COUNT} room types, from bedrooms and kitchens to home offices, patios and meeting rooms, and ${DESIGN_STYLE_COUNT} design styles such as Scandinavian, Japandi, Mid-Century Modern, Coastal and Farmhouse.`,
    },
    {
      q: "Can you remove existing furniture or change the sky?",
      a: "Yes. Furniture removal clears a furnished or cluttered room so you can show it empty or stage it fresh, and sky replacement turns a grey sky into day, dusk or night. Each uses one credit.",
    },
    {
      q: "What photos work best?",
      a: `JPG or PNG files up to ${UPLOAD_LIMIT_MB} MB. Level, well-lit, wide shots of empty or decluttered rooms give the most convincing results.`,
    },
    {
      q: "Can I use virtually staged photos in my listings?",
      a: "Yes: staged photos are yours to use in listings, print and social media at no extra cost. Most MLSs ask you to say that a photo is virtually staged, and we recommend you always do, ideally next to the original photo.",
    },
    {
      q: "Can I get a refund?",
      a: (
        <>
          If you ask within {REFUND_WINDOW_HOURS} hours of purchase and have used fewer than {REFUND_MAX_PHOTOS} photos
          for a single property. The{" "}
          <Link className={link} to="/refund-policy">
            refund policy
          </Link>{" "}
          has the details.
        </>
      ),
    },
    {
      q: `Do you offer pricing for ${BULK_MIN} or more properties?`,
      a: (
        <>
          Yes: {BULK_PRICE} dollars per property, all photos included, for {BULK_MIN} or more properties. Write to us at{" "}
          <a className={link} href={`mailto:${supportEmail}`}>
            {supportEmail}
          </a>
          .
        </>
      ),
    },
  ];
}
