import { readForm, readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { contentDisposition } from "@workers/lib/content-disposition";
import { disclosureView, mlsDownload, versionForMember } from "@workers/services/mls/downloads";
import { originalPageUrl, publishOriginal, withdrawOriginal } from "@workers/services/mls/links";
import { Hono } from "hono";
import { z } from "zod";
import { fail, NOT_FOUND } from "~/shared/result";
import { NO_STORE } from "./answers";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// A version on its way to the MLS (docs/decisions/0110, 0170): its download as the listing's profile says, what
// its disclosure will be, and its public original page, published or withdrawn. Only explicit requests that are
// not GETs publish anything. Anyone but the owner gets the same 404 as for a thing that does not exist.

const NO_OPTIONS = "This download takes no options: it follows the listing's MLS profile.";

/** The POST that says it publishes the original page when there is none yet (a web form or a fetch). */
const publishFirst = z.object({
  publish: z.literal("first", { message: "Say publish=first to publish the original page with this download." }),
});
const withdrawBody = z.object({ confirm: z.literal(true).optional() }).strict();

function fileAnswer(file: { body: BodyInit; contentType: string; fileName: string }): Response {
  return new Response(file.body, {
    headers: {
      ...NO_STORE,
      "Content-Type": file.contentType,
      "Content-Disposition": contentDisposition("attachment", file.fileName),
    },
  });
}

export const originalsApi = new Hono<ApiEnv>()
  .use("/photos/*", requireApiUser)
  // Download for MLS: labelled or clean per the listing's profile. Never publishes: without the original page the
  // profile's label needs, it answers 409 saying so (and, after a withdrawal, when and how to publish again).
  .get("/photos/:id/versions/:versionId/labelled", async (c) => {
    if (new URL(c.req.url).search.length > 1) return failureJson(fail("invalid", NO_OPTIONS));
    const res = await mlsDownload(c.get("deps"), c.get("user")!.id, c.req.param("id"), c.req.param("versionId"), null);
    if (!res.ok) return failureJson(res);
    return fileAnswer(res.file);
  })
  // The first Download for MLS, which says it publishes the original page (publish=first): made only when the
  // version never had one; a page its owner withdrew is not published again (409, with how to).
  .post("/photos/:id/versions/:versionId/labelled", async (c) => {
    const body = await readForm(c.req.raw, publishFirst);
    if (!body.ok) return failureJson(body);
    const { id, versionId } = c.req.param();
    const res = await mlsDownload(c.get("deps"), c.get("user")!.id, id, versionId, body.data.publish);
    if (!res.ok) return failureJson(res);
    return fileAnswer(res.file);
  })
  // What the version's disclosure will be: the profile, the caption, the label's lines, its page.
  .get("/photos/:id/versions/:versionId/disclosure", async (c) => {
    const found = await versionForMember(c.get("db"), c.get("user")!.id, c.req.param("id"), c.req.param("versionId"));
    if (!found) return failureJson(NOT_FOUND);
    return c.json({ ok: true, disclosure: disclosureView(found, c.get("deps").origin) }, 200, NO_STORE);
  })
  // Publish the version's original page (again, after a withdrawal: the owner asks for it here).
  .post("/photos/:id/versions/:versionId/link", async (c) => {
    const { db, origin, clock } = c.get("deps");
    const res = await publishOriginal(
      db,
      c.get("user")!.id,
      c.req.param("id"),
      c.req.param("versionId"),
      "again",
      clock(),
    );
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true, url: originalPageUrl(origin, res.token) }, 200, NO_STORE);
  })
  // Withdraw it. While its listing advertises, the first request answers 409 with the law's warning;
  // `{ "confirm": true }` withdraws it anyway.
  .delete("/photos/:id/versions/:versionId/link", async (c) => {
    const body = await readJson(c.req.raw, withdrawBody, { methods: ["DELETE"], optional: true });
    if (!body.ok) return failureJson(body);
    const { db, clock } = c.get("deps");
    const { id, versionId } = c.req.param();
    const res = await withdrawOriginal(db, c.get("user")!.id, id, versionId, body.data.confirm === true, clock());
    if (!res.ok) return failureJson(res);
    return c.json({ ok: true }, 200, NO_STORE);
  });
