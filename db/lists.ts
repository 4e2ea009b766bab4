import { type Column, type GetColumnData, inArray, notInArray, type SQL, type SQLWrapper, sql } from "drizzle-orm";

// D1 binds at most 100 parameters a statement (local D1 too: "too many SQL variables"). drizzle's
// `inArray(column, ids)` binds one per id, so a list the user sizes (a batch's 100 photos and the user's id: 101)
// fails with a 500 at the product's own limit. Here a list is bound as ONE parameter, a JSON array that SQLite's
// json_each reads back: `column IN (SELECT value FROM json_each(?))`, still answered from the column's index. A
// subquery stays a subquery (no parameters of its own beyond its conditions').
//
// scripts/check-lists.ts (run by `npm run lint`) refuses inArray / notInArray anywhere but here, unless the list
// is written out in the source (`inArray(jobs.status, ["queued", "running"])`), and refuses raw SQL that puts a
// value straight after IN. docs/decisions/0205-lists-bind-as-one-parameter.md

/** What a JSON array carries back unchanged: text and numbers (a Date or a blob would not compare equal). */
type ListValue<TColumn extends Column> =
  GetColumnData<TColumn, "raw"> extends string | number ? GetColumnData<TColumn, "raw"> : never;

function each(values: readonly unknown[]): SQL {
  return sql`(select value from json_each(${JSON.stringify(values)}))`;
}

/** `column IN (values)`, however many values, in one bound parameter. */
export function inList<TColumn extends Column>(column: TColumn, values: readonly ListValue<TColumn>[]): SQL {
  return inArray(column, each(values));
}

/** `column NOT IN (values)`, however many values, in one bound parameter. */
export function notInList<TColumn extends Column>(column: TColumn, values: readonly ListValue<TColumn>[]): SQL {
  return notInArray(column, each(values));
}

/** `column IN (subquery)`: a query, never a list (an array is not a query, so it does not type-check). */
export function inQuery(column: Column, query: SQLWrapper): SQL {
  return inArray(column, query);
}
