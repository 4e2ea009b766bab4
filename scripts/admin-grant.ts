import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { ROOT } from "./stack.ts";

// Makes an existing account an admin, on the local database (default) or a
// deployed environment's (--remote --env staging|production), and records it in the audit log.
//   npm run admin:grant -- someone@example.com
//   npm run admin:grant -- someone@example.com --remote --env production --reason "First admin"
const args = process.argv.slice(2);
const email = args
  .find((a) => !a.startsWith("--"))
  ?.trim()
  .toLowerCase();
const remote = args.includes("--remote");
const envAt = args.indexOf("--env");
const env = envAt >= 0 ? args[envAt + 1] : undefined;
const reasonAt = args.indexOf("--reason");
const reason = reasonAt >= 0 ? (args[reasonAt + 1] ?? "") : "Granted from the command line";

// A strict shape keeps the e-mail safe to put inside the SQL literal below
// (wrangler d1 execute takes no bound parameters).
if (
  !email ||
  !/^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$/.test(email) ||
  (remote && env !== "staging" && env !== "production")
) {
  console.error(
    'Usage: npm run admin:grant -- someone@example.com [--remote --env staging|production] [--reason "why"]',
  );
  process.exit(2);
}
const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
const now = Date.now();
const sql = `
INSERT INTO audit_log (id, actor_id, actor_email, action, target_user_id, reason, details, created_at)
  SELECT ${quote(randomUUID())}, NULL, 'command line', 'role.grant', id, ${quote(reason)}, '{}', ${now}
  FROM users WHERE email = ${quote(email)} AND role <> 'admin';
UPDATE users SET role = 'admin', updated_at = ${now} WHERE email = ${quote(email)};
SELECT email, role FROM users WHERE email = ${quote(email)};`;

const where = remote ? ["--remote", "--env", env!] : ["--local", "--persist-to", join(ROOT, ".wrangler", "state")];
const out = execFileSync(
  join(ROOT, "node_modules", ".bin", "wrangler"),
  ["d1", "execute", "DB", ...where, "--json", "--command", sql],
  { cwd: ROOT, encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
);
const results = JSON.parse(out) as { results: { email: string; role: string }[] }[];
const row = results.at(-1)?.results[0];
if (!row) {
  console.error(`No account with the e-mail ${email} on the ${remote ? "deployed" : "local"} database. Sign up first.`);
  process.exit(1);
}
console.log(
  `${row.email} is now ${row.role === "admin" ? "an admin" : row.role} on the ${remote ? "deployed" : "local"} database.`,
);
