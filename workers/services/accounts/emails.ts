import { escapeHtml, type MailMessage } from "@workers/adapters/mail";

// The account e-mails. Plain text first (the dev mailbox shows it with its
// links clickable), with a simple HTML twin.

function html(lines: string[], link: { href: string; label: string }): string {
  const body = lines.map((l) => `<p>${escapeHtml(l)}</p>`).join("");
  const button = `<p><a href="${escapeHtml(link.href)}" style="display:inline-block;padding:10px 16px;background:#2451d8;color:#fff;border-radius:8px;text-decoration:none">${escapeHtml(link.label)}</a></p>`;
  return `<!doctype html><html><body style="font-family:system-ui,sans-serif;color:#0f172a">${body}${button}<p style="color:#475569;font-size:13px">Or paste this address into your browser: ${escapeHtml(link.href)}</p></body></html>`;
}

export function appLink(appOrigin: string, path: string, token: string): string {
  return `${appOrigin.replace(/\/$/, "")}${path}?token=${token}`;
}

export function verificationEmail(to: string, name: string, link: string): MailMessage {
  const lines = [
    `Hi ${name},`,
    "Please confirm your email address to start using Stagewise.",
    "The link works once and expires in 24 hours. If you did not create an account, ignore this email.",
  ];
  return {
    to,
    subject: "Verify your email for Stagewise",
    text: `${lines[0]}\n\n${lines[1]}\n\n${link}\n\n${lines[2]}\n`,
    html: html(lines, { href: link, label: "Verify email" }),
  };
}

export function passwordResetEmail(to: string, name: string, link: string): MailMessage {
  const lines = [
    `Hi ${name},`,
    "Someone asked to reset the password of your Stagewise account. Choose a new one here:",
    "The link works once and expires in 1 hour. Setting a new password signs you out everywhere. If you did not ask for this, ignore this email: your password stays as it is.",
  ];
  return {
    to,
    subject: "Reset your Stagewise password",
    text: `${lines[0]}\n\n${lines[1]}\n\n${link}\n\n${lines[2]}\n`,
    html: html(lines, { href: link, label: "Choose a new password" }),
  };
}
