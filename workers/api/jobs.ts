import { checkFields, readJson } from "@workers/http/body";
import { failureJson } from "@workers/http/result";
import { jobView, jobWaitQuery, requestJob, waitForJobWithVersion } from "@workers/services/jobs/start";
import { Hono } from "hono";
import { JobRequest } from "~/shared/job-request";
import { NOT_FOUND } from "~/shared/result";
import { toVersionView } from "~/shared/version-view";
import { answerHeaders, NO_STORE, requestKey } from "./answers";
import { requireApiUser } from "./require-user";
import type { ApiEnv } from "./types";

// AI jobs: POST answers 202 with the job at once; the page long-polls GET /api/jobs/:id?wait=20. Only the owner sees
// a job; anyone else gets the same 404 as for one that does not exist. The versions they produce are versions.ts's.

export const jobsApi = new Hono<ApiEnv>()
  .use("/photos/:id/jobs", requireApiUser)
  .use("/jobs/*", requireApiUser)
  .post("/photos/:id/jobs", async (c) => {
    // The page sends a key per request it means to make once (app/lib/use-job.ts): sent again, it starts nothing.
    const key = requestKey(c.req.raw.headers);
    if (key instanceof Response) return key;
    const body = await readJson(c.req.raw, JobRequest);
    if (!body.ok) return failureJson(body);
    const res = await requestJob(c.get("deps"), c.get("user")!.id, c.req.param("id"), body.data, {
      submission: key.key ?? undefined,
    });
    if (!res.ok) return failureJson(res);
    // Variations: every result's job (each settles and is refunded on its own), the lead's first.
    const answer = { job: res.job, credits: res.credits, ...(res.jobIds ? { jobIds: res.jobIds } : {}) };
    return c.json(answer, 202, answerHeaders(res.replayed));
  })
  // ?wait=N (seconds, at most 20) holds the answer until the job has ended: the page's long poll.
  .get("/jobs/:id", async (c) => {
    const query = checkFields(jobWaitQuery, { wait: c.req.query("wait") });
    if (!query.ok) return failureJson(query);
    const found = await waitForJobWithVersion(c.get("deps"), c.get("user")!.id, c.req.param("id"), query.data.wait);
    if (!found) return failureJson(NOT_FOUND);
    const { job, version, shownKey } = found;
    return c.json({ job: jobView(job), version: version ? toVersionView(version, shownKey) : null }, 200, NO_STORE);
  });
