import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { bearer, json, listen } from "./http.ts";

// Speaks the subset of Resend's HTTP API the mail adapter uses (POST /emails with
// a bearer key) and keeps every message, so /dev/mailbox can list them.
export interface StoredMail {
  id: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  created_at: string;
}

export async function startMailEmulator(opts: { port: number; apiKey: string; storeFile: string }) {
  const messages: StoredMail[] = existsSync(opts.storeFile) ? JSON.parse(readFileSync(opts.storeFile, "utf8")) : [];
  const save = () => {
    mkdirSync(dirname(opts.storeFile), { recursive: true });
    writeFileSync(opts.storeFile, JSON.stringify(messages.slice(-500)));
  };
  return listen("mail", opts.port, (req, body, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "POST" && url.pathname === "/emails") {
      if (bearer(req) !== opts.apiKey)
        return json(res, 401, { name: "validation_error", message: "API key is invalid" });
      let input: Partial<StoredMail> & { to?: string | string[] };
      try {
        input = JSON.parse(body.toString("utf8"));
      } catch {
        return json(res, 422, { name: "validation_error", message: "Invalid JSON" });
      }
      if (!input.from || !input.to || !input.subject) {
        return json(res, 422, { name: "missing_required_field", message: "from, to and subject are required" });
      }
      const mail: StoredMail = {
        id: randomUUID(),
        from: input.from,
        to: Array.isArray(input.to) ? input.to : [input.to],
        subject: input.subject,
        text: input.text ?? "",
        html: input.html ?? "",
        created_at: new Date().toISOString(),
      };
      messages.push(mail);
      save();
      return json(res, 200, { id: mail.id });
    }
    if (req.method === "GET" && url.pathname === "/_emulator/emails") {
      const to = url.searchParams.get("to");
      return json(res, 200, to ? messages.filter((m) => m.to.includes(to)) : messages);
    }
    if (req.method === "DELETE" && url.pathname === "/_emulator/emails") {
      messages.length = 0;
      save();
      return json(res, 200, { ok: true });
    }
    return json(res, 404, { error: "not found" });
  });
}
