import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOTS, root, walk } from "../../scripts/check-layers.ts";
import { allListProblems, LIST_HELPER, listProblems } from "../../scripts/check-lists.ts";

// The list check of `npm run lint` (scripts/check-lists.ts, ADR 0205) on this tree, and on planted code: a list a
// user sizes bound one parameter per value must be caught, by file and line; a list written out, or bound through
// db/lists.ts, must not.

const files = ROOTS.flatMap((r) => walk(r));
const real = (f: string) => readFileSync(join(root, f), "utf8");
const FILE = "workers/services/planted.ts";
/** `${name}` as source text (an interpolation in the planted code, not in this file's strings). */
const v = (name: string) => `$${"{"}${name}}`;
const planted = (body: string) =>
  listProblems(
    FILE,
    `import { inArray, notInArray, sql } from "drizzle-orm";\nimport { inList } from "@db/lists";\n${body}`,
  );

describe("the list check", () => {
  it("finds nothing wrong in this tree, and reads every file of app/, workers/ and db/", () => {
    expect(files).toContain("workers/services/jobs/batches.ts");
    expect(allListProblems(files, real)).toEqual([]);
  });

  it("fails on inArray over a list held in a variable, naming the file and the line", () => {
    const problems = planted("export const q = (ids: string[]) =>\n  inArray(photos.id, ids);");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^workers\/services\/planted\.ts:4: inArray over a list that is not written out/);
  });

  it("fails on notInArray, on a list built in place, and on a written-out list holding a variable", () => {
    expect(planted("notInArray(jobs.id, running);")).toHaveLength(1);
    expect(planted("inArray(jobs.id, items.map((i) => i.jobId));")).toHaveLength(1);
    expect(planted('inArray(jobs.id, ["a", id]);')).toHaveLength(1);
    expect(planted("inArray(jobs.id, [...ids]);")).toHaveLength(1);
    // Called through the namespace (`import * as d from "drizzle-orm"`) too, and renamed on import.
    expect(planted("d.inArray(jobs.id, ids);")).toHaveLength(1);
    expect(planted('import { inArray as within } from "drizzle-orm";')[0]).toMatch(/imported under another name/);
  });

  it("fails on raw SQL that interpolates a value straight after IN", () => {
    expect(planted(`sql\`select id from jobs where id in ${v("ids")}\`;`)).toHaveLength(1);
    expect(planted(`sql\`select id from jobs where user_id = ${v("u")} and id IN (${v("ids")})\`;`)[0]).toMatch(
      /planted\.ts:3: a value interpolated straight after IN/,
    );
  });

  it("lets through a list written out in literals, the helpers, subqueries in raw SQL, and the helper itself", () => {
    expect(planted('inArray(jobs.status, ["queued", "running"]);\ninArray(jobs.n, [1, -2]);')).toEqual([]);
    expect(planted("inList(photos.id, ids);\nnotInList(jobs.id, running);\ninQuery(links.photoId, due);")).toEqual([]);
    expect(
      planted(`sql\`delete from photos where id in (select id from photos where user_id = ${v("u")} limit 5)\`;`),
    ).toEqual([]);
    expect(listProblems(LIST_HELPER, real(LIST_HELPER))).toEqual([]);
    expect(listProblems(LIST_HELPER, "inArray(column, values);")).toEqual([]);
  });
});
