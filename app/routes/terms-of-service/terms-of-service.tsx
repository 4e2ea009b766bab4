import { Link } from "react-router";
import { Article, CounselNote } from "~/components/article";
import { useRootData } from "~/root";
import type { Route } from "./+types/terms-of-service";

export const meta: Route.MetaFunction = () => [
  { title: "Terms of Service · Stagewise" },
  { name: "description", content: "The terms that apply when you use Stagewise virtual staging." },
];

export default function TermsOfService() {
  const email = useRootData()?.supportEmail ?? "";
  return (
    <Article
      title="Terms of Service"
      intro={
        <>
          Last updated: <CounselNote />. These terms are an agreement between you and the operator of Stagewise (
          <CounselNote>[legal entity name and address to be reviewed by counsel]</CounselNote>).
        </>
      }
    >
      <p>
        By creating an account or using Stagewise (the "Service") you agree to these terms. If you do not agree, please
        do not use the Service.
      </p>

      <h2>1. Use of Services</h2>
      <p>
        You must be at least 18 years old to use the Service. You are responsible for your account, for keeping your
        password safe and for everything done with it. The Service lets you upload photos of properties and receive
        virtually staged, sky-replaced or decluttered versions, paid for with credits from a subscription plan. One
        credit is used per processed image; credits expire 30 days after they are granted.
      </p>

      <h2>2. Prohibited Uses</h2>
      <p>You may not use the Service to:</p>
      <ul>
        <li>upload, process or generate images of people's faces;</li>
        <li>create deepfakes, face swaps or any other likeness of a real person;</li>
        <li>imitate anyone's voice (voice impersonation) or otherwise impersonate a person;</li>
        <li>
          misrepresent a property, for example by hiding defects, altering its structure or presenting staged photos as
          unedited where disclosure is required;
        </li>
        <li>upload material you have no right to use, or that is unlawful, harmful or infringes anyone's rights;</li>
        <li>
          interfere with the Service, probe it for weaknesses, or access it by automated means we have not offered.
        </li>
      </ul>

      <h2>3. Compliance with Laws</h2>
      <p>
        You are responsible for using staged images lawfully, including advertising, consumer-protection and real-estate
        rules and the rules of any listing service (MLS) you publish to. Many of them require that virtually staged
        photos be identified as such.
      </p>

      <h2>4. User-Generated Content</h2>
      <p>
        You keep the rights you have in the photos you upload. You confirm that you may use them and give us a licence
        to store and process them only to provide the Service to you. We do not sell your photos or use them to
        advertise without your permission.
      </p>

      <h2>5. Intellectual Property</h2>
      <p>
        The Service, its software and its design belong to us. Staged images remain our property until your plan has
        been paid in full; once paid, you may use them for any lawful purpose connected with marketing the property,
        without further fees.
      </p>

      <h2>6. Termination</h2>
      <p>
        You may stop using the Service and cancel your plan at any time from the billing page. We may suspend or close
        an account that breaks these terms, after notice where the law requires it. Refunds follow our{" "}
        <Link to="/refund-policy">Refund Policy</Link>.
      </p>

      <h2>7. Limitation of Liability</h2>
      <p>
        The Service is provided "as is". AI results can vary and you should review every image before publishing it. To
        the extent the law allows, we are not liable for indirect or consequential losses, and our total liability is
        limited to the amount you paid us in the 12 months before the claim. <CounselNote />
      </p>

      <h2>8. Indemnification</h2>
      <p>
        You agree to indemnify us against claims arising from the photos you upload, from how you use staged images, or
        from your breach of these terms. <CounselNote />
      </p>

      <h2>9. Modification</h2>
      <p>
        We may change these terms. We will tell you about material changes by e-mail or in the Service before they take
        effect; continuing to use the Service afterwards means you accept them.
      </p>

      <h2>10. Governing Law</h2>
      <p>
        These terms are governed by the laws of <CounselNote>[jurisdiction to be reviewed by counsel]</CounselNote>, and
        disputes are decided by the courts there, unless the law of your place of residence gives you other rights.
      </p>

      <h2>Contact</h2>
      <p>
        Questions about these terms: <a href={`mailto:${email}`}>{email}</a>.
      </p>
    </Article>
  );
}
