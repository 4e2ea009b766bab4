import { Article, CounselNote } from "~/components/article";
import { useRootData } from "~/root";
import type { Route } from "./+types/privacy-policy";

export const meta: Route.MetaFunction = () => [
  { title: "Privacy Policy · Stagewise" },
  { name: "description", content: "What Stagewise collects, why, who processes it and how to reach us about it." },
];

export default function PrivacyPolicy() {
  const email = useRootData()?.supportEmail ?? "";
  return (
    <Article
      title="Privacy Policy"
      intro={
        <>
          Last updated: <CounselNote />. The controller of your data is the operator of Stagewise (
          <CounselNote>[legal entity name and address to be reviewed by counsel]</CounselNote>).
        </>
      }
    >
      <h2>What we collect</h2>
      <ul>
        <li>
          <strong>Account details:</strong> your name and e-mail address, and your phone number if you give it to us,
          for example when you contact support.
        </li>
        <li>
          <strong>Your images:</strong> the photos you upload and the staged versions we create.
        </li>
        <li>
          <strong>Billing details:</strong> your plan, credits and payment status. Card details are handled by our
          payment provider, Stripe; we never see or store your card number.
        </li>
        <li>
          <strong>Messages:</strong> what you send us through the contact form or by e-mail.
        </li>
        <li>
          <strong>Technical data:</strong> a session cookie that keeps you signed in, and request data (such as IP
          address) that we use briefly to protect the Service from abuse.
        </li>
      </ul>

      <h2>How we use it</h2>
      <ul>
        <li>Uploaded images are used for staging: to produce the images you ask for and show them in your library.</li>
        <li>Your e-mail address is used to sign you in, verify your account, reset your password and answer you.</li>
        <li>Billing details are used to grant the credits you paid for and to manage your subscription.</li>
        <li>We do not sell your data, show you third-party advertising or use your photos to market the Service.</li>
      </ul>

      <h2>Who processes it for us</h2>
      <p>
        Our hosting provider (Cloudflare) stores the Service's data; an AI image provider processes the photos you
        submit for staging; Stripe processes payments; an e-mail provider delivers our e-mails. Each receives only what
        it needs for that task.{" "}
        <CounselNote>[list of processors and transfer safeguards to be reviewed by counsel]</CounselNote>
      </p>

      <h2>How long we keep it</h2>
      <p>
        Your photos stay in your library until you delete them; photos in the trash are removed for good after 30 days.
        Account and billing records are kept while your account exists and afterwards as long as the law requires.{" "}
        <CounselNote />
      </p>

      <h2>Cookies</h2>
      <p>
        We use one essential cookie, which keeps you signed in. We do not use advertising or tracking cookies, and our
        pages load no third-party scripts or images.
      </p>

      <h2>Your rights</h2>
      <p>
        You can ask to see, correct, export or delete your data, or object to how we use it, by writing to{" "}
        <a href={`mailto:${email}`}>{email}</a>. You may also complain to your data-protection authority.{" "}
        <CounselNote>[applicable laws and authority to be reviewed by counsel]</CounselNote>
      </p>
    </Article>
  );
}
