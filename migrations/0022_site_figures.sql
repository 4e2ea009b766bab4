-- The landing page's measured figures (issue 46, docs/decisions/0231-figures-from-the-agents-side.md): one row,
-- recomputed at most once an hour by the request that finds it stale and claims it, and read by every other
-- GET /api/figures. figures: the answer's JSON (NULL until first computed); computed_at: when (ms, 0 before);
-- claimed_at: a request recomputing it now (ms), so two requests at the hour do not both count the jobs.
-- Expand only (docs/decisions/0180): a new table and an index; the running release reads neither.
CREATE TABLE site_figures (
  id TEXT PRIMARY KEY,
  figures TEXT,
  computed_at INTEGER NOT NULL DEFAULT 0,
  claimed_at INTEGER
);

-- The figures count jobs that finished in the last 30 days: read through the jobs that have finished.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
