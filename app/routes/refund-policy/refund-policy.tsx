import { Article, CounselNote } from "~/components/article";
import { REFUND_MAX_PHOTOS, REFUND_WINDOW_HOURS } from "~/lib/marketing";
import { useRootData } from "~/root";
import type { Route } from "./+types/refund-policy";

export const meta: Route.MetaFunction = () => [
  { title: "Refund Policy · Stagewise" },
  { name: "description", content: "When Stagewise refunds a purchase and how to ask for it." },
];

export default function RefundPolicy() {
  const email = useRootData()?.supportEmail ?? "";
  return (
    <Article title="Refund Policy" intro={<>Last updated: {<CounselNote />}.</>}>
      <h2>When you can get a refund</h2>
      <p>We refund a purchase when both of these are true:</p>
      <ul>
        <li>you ask within {REFUND_WINDOW_HOURS} hours of the purchase, and</li>
        <li>
          fewer than {REFUND_MAX_PHOTOS} photos have been uploaded, staged or ordered for a single property with it.
        </li>
      </ul>

      <h2>When we do not refund</h2>
      <p>
        Dissatisfaction with delivered results is not a reason for a refund: AI staging varies from photo to photo, and
        you can restage a photo in another style at any time. Credits that have expired (30 days after they were
        granted) are not refunded.
      </p>

      <h2>Failed photos</h2>
      <p>
        You never pay for a photo that fails. A credit is set aside when processing starts and returned to your balance
        automatically if processing fails or times out; you do not need to ask.
      </p>

      <h2>How to ask</h2>
      <p>
        E-mail <a href={`mailto:${email}`}>{email}</a> from the address on your account, with your order details: the
        plan, the date of purchase and, if you have it, the receipt number. We answer every request.
      </p>

      <h2>How refunds are paid</h2>
      <p>
        Approved refunds are paid back to the original payment method within 5 business days{" "}
        <CounselNote>[number of business days to be reviewed by counsel]</CounselNote>; your bank may take a few more
        days to show it. A refunded plan's remaining credits are removed.
      </p>

      <h2>Cancelling</h2>
      <p>
        You can cancel your subscription at any time from the billing page. Cancelling stops future renewals; the
        current period is not refunded unless it meets the conditions above.
      </p>
    </Article>
  );
}
