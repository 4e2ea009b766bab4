import { readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import {
  adjustCredits,
  listUsers,
  resendVerificationFor,
  revokeSessions,
  SORT_KEYS,
  setRole,
  userDetail,
} from "@workers/services/admin";
import { Hono } from "hono";
import { z } from "zod";
import { isAdmin } from "~/shared/access";
import { fail, NOT_FOUND } from "~/shared/result";
import { cleanText } from "~/shared/text";
import type { ApiEnv } from "./types";

// /api/admin: the admin role only. Everyone else, signed in or not, gets the
// same 404 as an unknown path, so the API does not reveal that it exists.

const reason = cleanText("Reason", 3, 500);
const listQuery = z.object({
  q: z.string().max(254).optional(),
  sort: z.enum(SORT_KEYS).default("created"),
  dir: z.enum(["asc", "desc"]).default("desc"),
  cursor: z.string().max(512).optional(),
});
const creditsBody = z.object({
  amount: z
    .number()
    .int()
    .refine((n) => n !== 0 && Math.abs(n) <= 10_000, "Amount must be a whole number between -10000 and 10000, not 0."),
  reason,
});
const reasonBody = z.object({ reason });
const roleBody = z.object({ role: z.enum(["user", "admin"]), reason });

export const adminApi = new Hono<ApiEnv>()
  .use(async (c, next) => {
    const user = c.get("user");
    if (!user || !isAdmin(user)) return failureJson(NOT_FOUND);
    await next();
  })
  // Lets the admin screen (and tests) check access.
  .get("/", (c) => c.json({ ok: true, admin: c.get("user")?.email }))
  .get("/users", async (c) => {
    const parsed = listQuery.safeParse(c.req.query());
    if (!parsed.success) return failureJson(fail("invalid", parsed.error.issues[0]?.message ?? "Invalid query."));
    return c.json(await listUsers(c.get("db"), parsed.data));
  })
  .get("/users/:id", async (c) => {
    const detail = await userDetail(c.get("db"), c.req.param("id"));
    return detail ? c.json(detail) : failureJson(fail("not_found", "User not found"));
  })
  .post("/users/:id/credits", async (c) => {
    const parsed = await readJson(c.req.raw, creditsBody);
    if (!parsed.ok) return failureJson(parsed);
    const input = parsed.data;
    const key = c.req.header("Idempotency-Key");
    if (key !== undefined && !/^[\w-]{8,100}$/.test(key)) {
      return failureJson(fail("invalid", "Idempotency-Key must be 8 to 100 letters, digits, - or _."));
    }
    const res = await adjustCredits(
      c.env,
      c.get("db"),
      c.get("user")!,
      c.req.param("id"),
      input.amount,
      input.reason,
      key,
    );
    return res.ok ? c.json(res) : failureJson(res);
  })
  .post("/users/:id/sessions/revoke", async (c) => {
    const parsed = await readJson(c.req.raw, reasonBody);
    if (!parsed.ok) return failureJson(parsed);
    const input = parsed.data;
    const res = await revokeSessions(c.get("db"), c.get("user")!, c.req.param("id"), input.reason);
    return res.ok ? c.json(res) : failureJson(res);
  })
  .post("/users/:id/verification", async (c) => {
    const parsed = await readJson(c.req.raw, reasonBody);
    if (!parsed.ok) return failureJson(parsed);
    const input = parsed.data;
    const res = await resendVerificationFor(c.get("deps"), c.get("user")!, c.req.param("id"), input.reason);
    return res.ok ? c.json(res) : failureJson(res);
  })
  .post("/users/:id/role", async (c) => {
    const parsed = await readJson(c.req.raw, roleBody);
    if (!parsed.ok) return failureJson(parsed);
    const input = parsed.data;
    const res = await setRole(c.get("db"), c.get("user")!, c.req.param("id"), input.role, input.reason);
    return res.ok ? c.json(res) : failureJson(res);
  });
