// Why a figure is over its budget (issue 44 item 5): under its tables, bench/results/report.md lists every figure
// over budget with the sentence written here for it, or says in bold that none is written. A sentence gives a reason
// found by measurement and names where (a report, an ADR, a section of docs/performance.md); a figure that goes over
// for a reason nobody has measured gets no sentence, and the report shows it as unexplained.
//
// Keys are the start of a figure's name as its module writes it (names that carry counts, like the structure check's,
// are matched by their fixed start); the longest key that starts the name wins.

/** Issue 43's held-out rates, by kind (bench/results/report-structure-real.md has every candidate's AUC). */
const STRUCTURE_STAGE =
  "Staging's best candidate separates calibration's rooms (roomTensor, AUC 0.93, ADR 0362) mostly on other " +
  "viewpoints; alone, at a tenth of calibration's kept rooms marked, it passes 9 of 44 changed held-out rooms, so " +
  "production also marks on ADR 0160's score (ADR 0319): it passes 2 and marks half the kept ones (13 of 30 " +
  "without pictures drawn on for a figure); the labels had a blind second look (ADR 0331); issue 43 is open.";
const STRUCTURE_REMOVAL =
  "No candidate separates removals on calibration (AUCs 0.53-0.69): a changed removal differs from a kept one only " +
  "inside the filled hole; issue 43 is open.";
const STRUCTURE_SKY =
  "Skies are judged by the facade lines (ADR 0330, calibration AUC 0.98); held out they mark 5 of 18 kept skies " +
  "and pass 1 of 19 changed, with 13-16 sources a class. A sky whose ground or view was replaced is changed (ADR " +
  "0335): the lines pass the two such skies with no building in them; issue 43 is open.";

const DASHBOARD_JS =
  "FCP equals LCP, the page's text, with no render-blocking resource and only the document in the dependency tree " +
  "(Lighthouse's insights, 2026-11-29): in the runs where the simulation counts the modulepreloaded JavaScript as " +
  "started before the first paint, the paint waits for it (about 2.1 s against 1.1 s, this report's spread; " +
  'docs/performance.md, "What the over-budget figures say").';

export const WHY_OVER: Record<string, string> = {
  "/ requests/s":
    "`/` is a static file answered before the Worker runs (ADR 0145): no code of ours is on its way. It runs a " +
    "little below a built asset of about its size served in the same run (the baseline row above), the asset layer " +
    "resolving `/` to index.html, and the 1.95x budget sits inside the range such a file reaches on this harness " +
    '(docs/performance.md, "What the over-budget figures say" and the section on `/` after it).',
  "/dashboard p50":
    "The bare page with a session is already about 1.6x the bare page: the session's D1 read costs 0.7-1.1 ms of " +
    "the one thread that serves both, and /dashboard's component about 0.65 ms more, measured as CPU per request " +
    'from /proc (docs/performance.md, "What the over-budget figures say").',
  "/dashboard, 60 photos":
    "React writing the 24 cards. The grid posts through one form (ADR 0332) and React's string writes are gathered " +
    "(ADR 0333); with both, the headline run of 2026-11-30 16:13 gave 1.52x (runs 1.44-1.61x), so a loaded run can " +
    "land just over. Cutting more means fewer elements on a card " +
    '(docs/performance.md, "React\'s writes gathered").',
  "our overhead p":
    "The structure check is on the job's path: inside the check Worker and its one image service call, counted at " +
    "IMAGES_CALL_MS, take about 65 ms of the 60 ms budget before R2, D1, the provider slot and the rest (this " +
    "report's \"Staging: where a job's time goes\"). The check cannot run beside the provider call: it judges the " +
    "result.",
  "/dashboard LCP": DASHBOARD_JS,
  "stage: kept rooms": STRUCTURE_STAGE,
  "stage: changed rooms": STRUCTURE_STAGE,
  "removal: kept rooms": STRUCTURE_REMOVAL,
  "removal: changed rooms": STRUCTURE_REMOVAL,
  "sky: kept rooms": STRUCTURE_SKY,
  "sky: changed rooms": STRUCTURE_SKY,
};

/** The sentence written for an over-budget figure, or undefined when none is. */
export function whyOver(name: string, why: Record<string, string> = WHY_OVER): string | undefined {
  let best: string | undefined;
  for (const key of Object.keys(why))
    if (name.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : why[best];
}
