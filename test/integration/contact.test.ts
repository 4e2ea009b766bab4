import { env } from "cloudflare:workers";
import { contactMessages } from "@db/schema";
import { db, makeUser } from "@test/support/factories";
import { createMailer } from "@workers/adapters/mail";
import { RATE_LIMITED_MESSAGE, rateLimit } from "@workers/objects/rate-limiter";
import { CONTACT_FAILED_MESSAGE, CONTACT_RULE, submitContactMessage } from "@workers/services/contact";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { CONTACT_HONEYPOT } from "~/shared/contact";

// The contact service against real D1 and the real Durable Object rate
// limiter; the mail API is a recording fetch behind the real mail adapter.

interface SentMail {
  url: string;
  auth: string | null;
  body: { from: string; to: string[]; subject: string; text: string; html: string; reply_to?: string };
}

function recordingMailer(status = 200) {
  const sent: SentMail[] = [];
  const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    sent.push({ url: req.url, auth: req.headers.get("Authorization"), body: await req.json() });
    return new Response(JSON.stringify({ id: "m1" }), { status });
  }) as typeof fetch;
  return { sent, mailer: createMailer(env, fetcher) };
}

function deps(over: { ip?: string; status?: number; userId?: string | null } = {}) {
  const { sent, mailer } = recordingMailer(over.status);
  return {
    sent,
    deps: {
      db,
      mailer,
      supportEmail: env.SUPPORT_EMAIL,
      rateLimit: (keys: string[]) => rateLimit(env, CONTACT_RULE, keys),
      ip: over.ip ?? `198.51.100.${Math.floor(Math.random() * 250)}-${crypto.randomUUID()}`,
      userId: over.userId ?? null,
    },
  };
}

function form(fields: Record<string, string>): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.set(k, v);
  return f;
}

const uniqueEmail = () => `Sender-${crypto.randomUUID().slice(0, 8)}@Example.test`;

async function rowsFor(email: string) {
  return db.select().from(contactMessages).where(eq(contactMessages.email, email)).all();
}

describe("submitContactMessage", () => {
  it("stores the message and e-mails it to the support address, replying to the sender", async () => {
    const user = await makeUser();
    const { sent, deps: d } = deps({ userId: user.id });
    const email = uniqueEmail();
    const result = await submitContactMessage(
      form({ name: "  Dana   Realtor ", email, message: "Do you stage\r\n<b>10</b> homes?" }),
      d,
    );
    expect(result).toEqual({ ok: true, name: "Dana Realtor" });

    const rows = await rowsFor(email);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: "Dana Realtor", message: "Do you stage\n<b>10</b> homes?", userId: user.id });
    expect(rows[0]!.mailedAt).toBeGreaterThanOrEqual(rows[0]!.createdAt);

    expect(sent).toHaveLength(1);
    const mail = sent[0]!;
    expect(mail.url).toBe(`${env.MAIL_API_URL}/emails`);
    expect(mail.auth).toBe(`Bearer ${env.MAIL_API_KEY}`);
    expect(mail.body).toMatchObject({
      to: [env.SUPPORT_EMAIL],
      reply_to: email,
      subject: "Contact form: Dana Realtor",
    });
    expect(mail.body.text).toContain("Do you stage\n<b>10</b> homes?");
    expect(mail.body.html).toContain("&#60;b&#62;10&#60;/b&#62;");
    expect(mail.body.html).not.toContain("<b>10");
  });

  it("refuses invalid input with a message per field and changes nothing", async () => {
    const { sent, deps: d } = deps();
    const email = "not-an-email";
    const cases: [Record<string, string>, string[]][] = [
      [{ name: "", email, message: "" }, ["name", "email", "message"]],
      [{ name: "   ", email: uniqueEmail(), message: "hi" }, ["name"]],
      [{ name: "A", email: uniqueEmail(), message: " \n " }, ["message"]],
      [{ name: "A", email: uniqueEmail(), message: "x".repeat(5001) }, ["message"]],
      [{ name: "x".repeat(101), email: uniqueEmail(), message: "hi" }, ["name"]],
      [{}, ["name", "email", "message"]],
    ];
    const before = await db.$count(contactMessages);
    for (const [fields, invalid] of cases) {
      const result = await submitContactMessage(form(fields), d);
      expect(result.ok || result.code).toBe("invalid");
      if (result.ok) continue;
      expect(Object.keys(result.fieldErrors ?? {}).sort()).toEqual(invalid.sort());
      expect(result.values?.name).toBe(fields.name ?? "");
    }
    expect(await db.$count(contactMessages)).toBe(before);
    expect(sent).toHaveLength(0);
    // Invalid attempts do not count against the sender's limit.
    const ok = await submitContactMessage(form({ name: "A", email: uniqueEmail(), message: "hello" }), d);
    expect(ok.ok).toBe(true);
  });

  it("accepts a message of exactly 5000 characters", async () => {
    const { deps: d } = deps();
    const email = uniqueEmail();
    const result = await submitContactMessage(form({ name: "A", email, message: "y".repeat(5000) }), d);
    expect(result.ok).toBe(true);
    expect((await rowsFor(email))[0]!.message).toHaveLength(5000);
  });

  it("limits one e-mail address across IPs, and one IP across e-mail addresses", async () => {
    const email = uniqueEmail();
    for (let i = 0; i < CONTACT_RULE.limit; i++) {
      const { deps: d } = deps();
      const r = await submitContactMessage(form({ name: "A", email, message: `m${i}` }), d);
      expect(r.ok).toBe(true);
    }
    const { sent, deps: fresh } = deps();
    const refused = await submitContactMessage(form({ name: "A", email, message: "one more" }), fresh);
    expect(refused).toEqual({
      ok: false,
      code: "rate_limited",
      error: RATE_LIMITED_MESSAGE,
      retryAfterSeconds: expect.any(Number),
    });
    expect(!refused.ok && refused.retryAfterSeconds).toBeGreaterThan(0);
    expect(sent).toHaveLength(0);
    expect(await rowsFor(email)).toHaveLength(CONTACT_RULE.limit);

    const ip = `203.0.113.7-${crypto.randomUUID()}`;
    const results = [];
    for (let i = 0; i <= CONTACT_RULE.limit; i++) {
      const { deps: d } = deps({ ip });
      const r = await submitContactMessage(form({ name: "B", email: uniqueEmail(), message: "hi" }), d);
      results.push(r.ok ? "sent" : r.code);
    }
    expect(results).toEqual([...Array(CONTACT_RULE.limit).fill("sent"), "rate_limited"]);
  });

  it("drops a honeypot hit silently: answers like a success, stores and sends nothing", async () => {
    const { sent, deps: d } = deps();
    const email = uniqueEmail();
    const result = await submitContactMessage(
      form({ name: "Bot", email, message: "buy now", [CONTACT_HONEYPOT]: "http://spam.test" }),
      d,
    );
    expect(result).toEqual({ ok: true, name: "Bot" });
    expect(await rowsFor(email)).toHaveLength(0);
    expect(sent).toHaveLength(0);
  });

  it("keeps the message but reports an error when the e-mail cannot be sent", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const { sent, deps: d } = deps({ status: 500 });
    const email = uniqueEmail();
    const result = await submitContactMessage(form({ name: "A", email, message: "hello" }), d);
    expect(warn).toHaveBeenCalledOnce();
    expect(result).toMatchObject({
      ok: false,
      code: "unavailable",
      error: CONTACT_FAILED_MESSAGE,
      values: { message: "hello" },
    });
    expect(sent).toHaveLength(1);
    const rows = await rowsFor(email);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.mailedAt).toBeNull();
  });
});
