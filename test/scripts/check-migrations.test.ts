import { execFile, execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { checkMigrations, compare, schemaColumns, simulate } from "../../scripts/check-migrations.ts";

// The migration check of `npm test` (scripts/check-migrations.ts, ADR 0180), in a throwaway git repository holding
// this checkout's db/schema.ts and migrations: tagged release-test as the release running, then a planted migration.

const ROOT = join(import.meta.dirname, "..", "..");
const exec = promisify(execFile);
let repo = "";
const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" });
/** An annotated tag made at `date` (tags made within one second would otherwise tie). */
const tag = (name: string, date: string) =>
  execFileSync("git", ["-C", repo, "tag", "-a", name, "-m", name], {
    env: { ...process.env, GIT_COMMITTER_DATE: date },
  });
const migrations = () =>
  readdirSync(join(ROOT, "migrations"))
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(ROOT, "migrations", name), "utf8") }));
const schema = readFileSync(join(ROOT, "db", "schema.ts"), "utf8");
const release = { name: "release-test", schema, files: migrations() };
/** The check with one migration added after the release's. */
const withNew = (sql: string) => compare(release, [...release.files, { name: "0099_planted.sql", sql }]);

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "stagewise-migrations-"));
  git("init", "-q", "-b", "main");
  git("config", "user.email", "test@example.com");
  git("config", "user.name", "Test");
  cpSync(join(ROOT, "db", "schema.ts"), join(repo, "db", "schema.ts"));
  cpSync(join(ROOT, "migrations"), join(repo, "migrations"), { recursive: true });
  git("add", ".");
  git("commit", "-q", "-m", "the release");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("node scripts/check-migrations.ts", () => {
  test("with no release tag every migration is exempt, and it says so", async () => {
    const { stdout } = await exec(process.execPath, [join(ROOT, "scripts/check-migrations.ts"), "--root", repo]);
    expect(stdout).toContain("no release-* tag here, so every migration is exempt");
  });

  test("a planted migration dropping a column the tagged release reads fails, naming the column", async () => {
    tag("release-test", "2030-01-01T00:00:00Z");
    const planted = join(repo, "migrations", "0099_drop_prefix.sql");
    writeFileSync(planted, "-- tidy up\nALTER TABLE api_keys DROP COLUMN prefix;\n");
    try {
      const failed = await exec(process.execPath, [join(ROOT, "scripts/check-migrations.ts"), "--root", repo]).then(
        () => null,
        (err: { code: number; stderr: string }) => err,
      );
      expect(failed?.code).toBe(1);
      expect(failed?.stderr).toContain(
        "A new migration drops column api_keys.prefix (0099_drop_prefix.sql: ALTER TABLE api_keys DROP COLUMN prefix), which release-test reads: expand first, contract in a later release",
      );
      // A harmless migration in its place passes.
      writeFileSync(planted, "ALTER TABLE api_keys ADD COLUMN note TEXT;\n");
      const { stdout } = await exec(process.execPath, [join(ROOT, "scripts/check-migrations.ts"), "--root", repo]);
      expect(stdout).toContain("0099_drop_prefix.sql since release-test: every table and column it reads stays.");
    } finally {
      rmSync(planted);
    }
  });

  test("compares with the release tagged last", () => {
    // The later release's schema stops reading api_keys.prefix: dropping it is now the contract step.
    writeFileSync(join(repo, "db", "schema.ts"), schema.replace('prefix: text("prefix").notNull(),', ""));
    git("commit", "-q", "-am", "stop reading prefix");
    tag("release-test-later", "2030-01-02T00:00:00Z");
    writeFileSync(join(repo, "migrations", "0099_drop_prefix.sql"), "ALTER TABLE api_keys DROP COLUMN prefix;");
    try {
      expect(checkMigrations(repo)).toEqual({
        ok: true,
        lines: ["0099_drop_prefix.sql since release-test-later: every table and column it reads stays."],
      });
    } finally {
      rmSync(join(repo, "migrations", "0099_drop_prefix.sql"));
    }
  });
});

describe("what the check refuses", () => {
  test("dropping or renaming a table the release reads", () => {
    expect(withNew("DROP TABLE batches;").ok).toBe(false);
    expect(withNew("DROP TABLE batches;").lines).toEqual([
      expect.stringContaining("A new migration drops table batches (0099_planted.sql: DROP TABLE batches), which"),
    ]);
    expect(withNew("ALTER TABLE batches RENAME TO listing_batches;").lines[0]).toContain(
      "A new migration renames table batches",
    );
  });

  test("renaming a column the release reads", () => {
    const r = withNew("ALTER TABLE photos RENAME COLUMN name TO title;");
    expect(r.ok).toBe(false);
    expect(r.lines[0]).toContain("renames column photos.name");
  });

  test("a table rebuild that leaves out a column the release reads, or adds one NOT NULL without a default", () => {
    const rebuild = (columns: string) => `
      CREATE TABLE credit_reservations_new (${columns});
      INSERT INTO credit_reservations_new SELECT * FROM credit_reservations;
      DROP TABLE credit_reservations;
      ALTER TABLE credit_reservations_new RENAME TO credit_reservations;`;
    const all =
      "key TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE, amount INTEGER NOT NULL CHECK (amount >= 0), allocations TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL, settled_at INTEGER";
    const kept = withNew(rebuild(all));
    expect(kept.ok).toBe(true);
    expect(kept.lines[0]).toContain("rebuilds credit_reservations, keeping every column release-test reads");
    const dropped = withNew(rebuild(all.replace(", settled_at INTEGER", "")));
    expect(dropped.ok).toBe(false);
    expect(dropped.lines).toEqual([
      expect.stringContaining(
        "A new migration rebuilds without column credit_reservations.settled_at (0099_planted.sql: DROP TABLE credit_reservations)",
      ),
    ]);
    const strict = withNew(rebuild(`${all}, origin TEXT NOT NULL`));
    expect(strict.lines[0]).toContain("gives credit_reservations the column origin NOT NULL without a DEFAULT");
    expect(withNew(rebuild(`${all}, origin TEXT NOT NULL DEFAULT 'web'`)).ok).toBe(true);
  });

  test("rebuilding a table other tables reference (DROP TABLE runs their ON DELETE actions)", () => {
    const r = withNew(`
      CREATE TABLE folders_new (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, name TEXT NOT NULL, parent_id TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
      DROP TABLE folders;
      ALTER TABLE folders_new RENAME TO folders;`);
    expect(r.ok).toBe(false);
    expect(r.lines.join("\n")).toContain(
      "A new migration drops table folders (0099_planted.sql: DROP TABLE folders), which photos references",
    );
  });

  test("changing a migration the release applied", () => {
    const [first, ...rest] = release.files;
    const r = compare(release, [{ name: first!.name, sql: `${first!.sql}\n-- edited` }, ...rest]);
    expect(r.ok).toBe(false);
    expect(r.lines).toEqual([
      `${first!.name} was applied by release-test and has changed since: write a new migration instead.`,
    ]);
  });

  test("but not what the release does not read: a new table, dropped again; a column added and dropped", () => {
    expect(withNew("CREATE TABLE scratch (id TEXT PRIMARY KEY); DROP TABLE scratch;").ok).toBe(true);
    expect(withNew("ALTER TABLE photos ADD COLUMN tmp TEXT; ALTER TABLE photos DROP COLUMN tmp;").ok).toBe(true);
  });
});

test("the model the check builds from migrations/ holds every table and column db/schema.ts declares", () => {
  const { db } = simulate(migrations());
  const missing = [...schemaColumns(schema)].flatMap(([t, cols]) =>
    [...cols].filter((c) => !db.get(t)?.columns.has(c)).map((c) => `${t}.${c}`),
  );
  expect(schemaColumns(schema).size).toBeGreaterThan(20);
  expect(missing).toEqual([]);
});
