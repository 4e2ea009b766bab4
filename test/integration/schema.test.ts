import { env } from "cloudflare:workers";
import * as schema from "@db/schema";
import { getTableColumns, getTableName } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";

// The SQL migrations are the source of truth; this keeps db/schema.ts honest.
describe("drizzle schema", () => {
  const tables = (Object.values(schema) as unknown[]).filter(
    (v): v is SQLiteTable => typeof v === "object" && v !== null && Symbol.for("drizzle:Name") in v,
  );

  // table_xinfo, not table_info: it lists generated columns too (photo_versions.structure_outcome).
  it("declares only columns that exist in the migrated database", async () => {
    expect(tables.length).toBeGreaterThan(3);
    for (const table of tables) {
      const name = getTableName(table);
      const { results } = await env.DB.prepare(`SELECT name FROM pragma_table_xinfo(?)`)
        .bind(name)
        .all<{ name: string }>();
      const actual = new Set(results.map((r) => r.name));
      expect(actual.size, `table ${name} exists`).toBeGreaterThan(0);
      for (const col of Object.values(getTableColumns(table))) {
        expect(actual.has(col.name), `${name}.${col.name}`).toBe(true);
      }
    }
  });
});
