// Outbound e-mail through an HTTP e-mail API speaking Resend's contract
// (POST {base}/emails with a bearer key). Locally MAIL_API_URL points at the
// mail emulator (emulators/mail.ts), which speaks the same contract and keeps
// what it receives for /dev/mailbox. See docs/decisions/0012-email-provider.md.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  replyTo?: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

export class MailError extends Error {}

export function createMailer(
  env: Pick<Env, "MAIL_API_URL" | "MAIL_API_KEY" | "MAIL_FROM">,
  fetcher: typeof fetch = fetch,
): Mailer {
  const base = (env.MAIL_API_URL ?? "https://api.resend.com").replace(/\/$/, "");
  return {
    async send(message) {
      if (!env.MAIL_API_KEY) throw new MailError("MAIL_API_KEY is not set");
      const res = await fetcher(`${base}/emails`, {
        method: "POST",
        headers: { Authorization: `Bearer ${env.MAIL_API_KEY}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          from: env.MAIL_FROM,
          to: [message.to],
          subject: message.subject,
          text: message.text,
          html: message.html,
          ...(message.replyTo ? { reply_to: message.replyTo } : {}),
        }),
      });
      if (!res.ok) throw new MailError(`Mail API answered ${res.status}`);
    },
  };
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
