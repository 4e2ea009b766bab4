import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

// A migration must not break the release that is running while it is applied
// (docs/decisions/0180-migrations-expand-then-contract.md). `npm run deploy` applies migrations before it deploys
// the code, and a deploy can stop between the two: for a while, possibly for good, the release tagged last
// (release-*, tagged by every production deploy) reads a database changed under it. So, compared with that tag:
//
//   - a table or column that release reads (its db/schema.ts, which drizzle selects in full) must still exist, under
//     the same name, after the new migrations: no DROP TABLE, DROP COLUMN, RENAME TO, RENAME COLUMN of it, and a
//     table rebuild (CREATE TABLE x_new … DROP TABLE x … ALTER TABLE x_new RENAME TO x) keeps every column it reads;
//   - a rebuilt table gains no NOT NULL column without a DEFAULT (the release's inserts do not set it);
//   - no table other tables reference is dropped, rebuilt or not: DROP TABLE deletes its rows first and D1 enforces
//     foreign keys, so ON DELETE CASCADE empties the referencing tables (or the drop fails);
//   - a migration the release already applied does not change.
//
// Expand first, contract in a later release. Migrations before the first release tag are exempt; with no tag (none
// pushed yet, or a clone without tags) everything is exempt, and the check says so.
//
//   node scripts/check-migrations.ts [--root <checkout>]      (run by `npm run lint`, so by `npm test`)

export interface Column {
  notNull: boolean;
  hasDefault: boolean;
}
export interface Table {
  columns: Map<string, Column>;
  /** Tables this one's foreign keys point at. */
  references: Set<string>;
}
/** What a statement of a new migration did to a table or a column, for the message. */
export interface Change {
  file: string;
  statement: string;
}

const IDENT = String.raw`["\`\[]?(\w+)["\`\]]?`;
const CONSTRAINT = /^(PRIMARY|UNIQUE|CHECK|FOREIGN|CONSTRAINT)\b/i;

/** The SQL names of the tables and columns a drizzle schema declares: what code built on it reads. */
export function schemaColumns(source: string): Map<string, Set<string>> {
  const tables = new Map<string, Set<string>>();
  const start = /sqliteTable\(\s*"(\w+)"\s*,\s*\{/g;
  for (let m = start.exec(source); m; m = start.exec(source)) {
    let depth = 1;
    let i = start.lastIndex;
    while (i < source.length && depth > 0) {
      const ch = source[i++];
      if (ch === "{") depth++;
      else if (ch === "}") depth--;
    }
    const body = source.slice(start.lastIndex, i);
    const cols = new Set([...body.matchAll(/\b(?:text|integer|real|blob|numeric)\(\s*"(\w+)"/g)].map((c) => c[1]!));
    tables.set(m[1]!, cols);
  }
  return tables;
}

/** The statements of a SQL file, comments removed, split on semicolons outside quotes. */
export function statements(sql: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i]!;
    if (quote) {
      cur += ch;
      if (ch === quote) quote = null;
    } else if (ch === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n") i++;
      cur += " ";
    } else if (ch === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      i = end < 0 ? sql.length : end + 1;
      cur += " ";
    } else if (ch === "'" || ch === '"' || ch === "`") {
      quote = ch;
      cur += ch;
    } else if (ch === ";") {
      out.push(cur);
      cur = "";
    } else cur += ch;
  }
  out.push(cur);
  return out.map((s) => s.replace(/\s+/g, " ").trim()).filter(Boolean);
}

/** Splits on commas outside parentheses and quotes. */
function topLevel(list: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let cur = "";
  for (const ch of list) {
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (ch === "," && depth === 0) {
      parts.push(cur.trim());
      cur = "";
      continue;
    }
    cur += ch;
  }
  if (cur.trim()) parts.push(cur.trim());
  return parts;
}

function columnOf(def: string): [string, Column, string | null] | null {
  if (CONSTRAINT.test(def)) return null;
  const m = new RegExp(`^${IDENT}`).exec(def);
  if (!m) return null;
  const ref = /\bREFERENCES\s+["`[]?(\w+)/i.exec(def)?.[1]?.toLowerCase() ?? null;
  const notNull = /\bNOT\s+NULL\b/i.test(def) && !/\bPRIMARY\s+KEY\b/i.test(def);
  return [m[1]!.toLowerCase(), { notNull, hasDefault: /\bDEFAULT\b/i.test(def) }, ref];
}

function parseCreate(body: string): Table {
  const table: Table = { columns: new Map(), references: new Set() };
  for (const def of topLevel(body)) {
    const fk = /^(?:CONSTRAINT\s+\w+\s+)?FOREIGN\s+KEY\b.*\bREFERENCES\s+["`[]?(\w+)/i.exec(def);
    if (fk) table.references.add(fk[1]!.toLowerCase());
    const col = columnOf(def);
    if (!col) continue;
    table.columns.set(col[0], col[1]);
    if (col[2]) table.references.add(col[2]);
  }
  return table;
}

/** The database the migrations make, and what each statement of `tracked` files did to tables and columns. */
export function simulate(files: { name: string; sql: string }[], tracked = new Set<string>()) {
  const db = new Map<string, Table>();
  const dropped = new Map<string, Change>(); // table -> the DROP TABLE or RENAME TO that removed its name
  const columnChanges = new Map<string, Change>(); // table.column -> the DROP/RENAME COLUMN
  let note: (map: Map<string, Change>, key: string) => void = () => undefined;
  // Each statement kind and what it does; the first that matches applies. Names are compared in lower case.
  const rules: [RegExp, (m: string[]) => void][] = [
    [
      new RegExp(`^CREATE TABLE (?:IF NOT EXISTS )?${IDENT} ?\\((.*)\\)[^)]*$`, "is"),
      ([, t, body]) => {
        if (!db.has(t!)) db.set(t!, parseCreate(body!));
      },
    ],
    [
      new RegExp(`^DROP TABLE (?:IF EXISTS )?${IDENT}`, "i"),
      ([, t]) => {
        db.delete(t!);
        note(dropped, t!);
      },
    ],
    [
      new RegExp(`^ALTER TABLE ${IDENT} RENAME TO ${IDENT}`, "i"),
      ([, from, to]) => {
        const t = db.get(from!);
        db.delete(from!);
        if (t) db.set(to!, t);
        note(dropped, from!);
      },
    ],
    [
      new RegExp(`^ALTER TABLE ${IDENT} RENAME (?:COLUMN )?${IDENT} TO ${IDENT}`, "i"),
      ([, t, from, to]) => {
        const table = db.get(t!);
        const c = table?.columns.get(from!);
        table?.columns.delete(from!);
        if (table && c) table.columns.set(to!, c);
        note(columnChanges, `${t}.${from}`);
      },
    ],
    [
      new RegExp(`^ALTER TABLE ${IDENT} DROP (?:COLUMN )?${IDENT}`, "i"),
      ([, t, c]) => {
        db.get(t!)?.columns.delete(c!);
        note(columnChanges, `${t}.${c}`);
      },
    ],
    [
      new RegExp(`^ALTER TABLE ${IDENT} ADD (?:COLUMN )?(.*)$`, "i"),
      ([, t, def]) => {
        const col = columnOf(def!);
        const table = db.get(t!);
        if (!table || !col) return;
        table.columns.set(col[0], col[1]);
        if (col[2]) table.references.add(col[2]);
      },
    ],
  ];
  for (const file of files) {
    for (const statement of statements(file.sql)) {
      note = (map, key) => {
        if (tracked.has(file.name)) map.set(key, { file: file.name, statement });
      };
      for (const [re, apply] of rules) {
        const m = re.exec(statement);
        if (!m) continue;
        // Names in lower case: SQLite's are case-insensitive.
        apply(m.map((v) => v.toLowerCase()));
        break;
      }
    }
  }
  return { db, dropped, columnChanges };
}

export interface CheckResult {
  ok: boolean;
  lines: string[];
}

/**
 * Compares the migrations of `current` (all of them, in order) with those of a release: `releaseFiles` are the
 * migrations that release applied, `releaseSchema` its db/schema.ts.
 */
export function compare(
  release: { name: string; schema: string; files: { name: string; sql: string }[] },
  current: { name: string; sql: string }[],
): CheckResult {
  const problems: string[] = [];
  const applied = new Map(release.files.map((f) => [f.name, f.sql]));
  for (const [name, sql] of applied) {
    const now = current.find((f) => f.name === name);
    if (!now) problems.push(`${name} was applied by ${release.name} and is gone: an applied migration stays.`);
    else if (now.sql !== sql) {
      problems.push(`${name} was applied by ${release.name} and has changed since: write a new migration instead.`);
    }
  }
  const added = current.filter((f) => !applied.has(f.name));
  const before = simulate(release.files).db;
  const after = simulate(current, new Set(added.map((f) => f.name)));
  const reads = schemaColumns(release.schema);
  const where = (c: Change | undefined) => (c ? ` (${c.file}: ${c.statement.slice(0, 160)})` : "");
  const expand = "expand first, contract in a later release (docs/decisions/0180-migrations-expand-then-contract.md)";

  for (const [table, columns] of reads) {
    const now = after.db.get(table);
    if (!now) {
      const how = after.dropped.get(table);
      const verb = how && /RENAME/i.test(how.statement) ? "renames" : "drops";
      problems.push(`A new migration ${verb} table ${table}${where(how)}, which ${release.name} reads: ${expand}.`);
      continue;
    }
    for (const column of columns) {
      if (now.columns.has(column)) continue;
      const how = after.columnChanges.get(`${table}.${column}`);
      const verb = how ? (/RENAME/i.test(how.statement) ? "renames" : "drops") : "rebuilds without";
      problems.push(
        `A new migration ${verb} column ${table}.${column}${where(how ?? after.dropped.get(table))}, which ${release.name} reads: ${expand}.`,
      );
    }
    const had = before.get(table)?.columns ?? new Map<string, Column>();
    for (const [column, def] of now.columns) {
      if (had.has(column) || !def.notNull || def.hasDefault) continue;
      problems.push(
        `A new migration gives ${table} the column ${column} NOT NULL without a DEFAULT${where(after.dropped.get(table))}: ${release.name} inserts rows into ${table} without it. Give it a DEFAULT, or make it NOT NULL in a later release.`,
      );
    }
  }
  for (const [table, how] of after.dropped) {
    if (!before.has(table)) continue;
    const children = [...before].filter(([name, t]) => name !== table && t.references.has(table)).map(([n]) => n);
    if (children.length === 0) continue;
    problems.push(
      `A new migration drops table ${table}${where(how)}, which ${children.join(", ")} reference${children.length === 1 ? "s" : ""}: DROP TABLE deletes its rows first and D1 enforces foreign keys, so their ON DELETE actions run (CASCADE deletes the referencing rows) or the drop fails. Leave ${table} in place and add what it needs with ALTER TABLE.`,
    );
  }
  // A rebuild that keeps what the release reads passes, but the table is replaced under running requests: say so.
  const rebuilt = [...after.dropped.keys()].filter((t) => reads.has(t) && after.db.has(t));
  const notes = rebuilt.map(
    (t) => `${where(after.dropped.get(t)).slice(2, -1)} rebuilds ${t}, keeping every column ${release.name} reads.`,
  );
  const lines =
    problems.length > 0
      ? problems
      : [
          ...notes,
          added.length === 0
            ? `no migration since ${release.name}.`
            : `${added.map((f) => f.name).join(", ")} since ${release.name}: every table and column it reads stays.`,
        ];
  return { ok: problems.length === 0, lines };
}

function git(root: string, ...args: string[]): string {
  return execFileSync("git", ["-C", root, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The release tag made last (by its date), or null when there is none here. */
export function lastReleaseTag(root: string): string | null {
  const out = git(
    root,
    "for-each-ref",
    "--sort=-creatordate",
    "--count=1",
    "--format=%(refname:short)",
    "refs/tags/release-*",
  );
  return out.trim() || null;
}

export function checkMigrations(root: string): CheckResult {
  const dir = join(root, "migrations");
  const current = readdirSync(dir)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") }));
  let tag: string | null;
  try {
    tag = lastReleaseTag(root);
  } catch {
    return { ok: true, lines: ["not a git checkout: no release tag to compare with, every migration is exempt."] };
  }
  if (!tag) {
    const shallow = git(root, "rev-parse", "--is-shallow-repository").trim() === "true";
    return {
      ok: true,
      lines: [
        `no release-* tag here, so every migration is exempt (${current.length} checked against nothing).`,
        shallow
          ? "This clone is shallow: fetch the release tags (git fetch --tags origin) for the check to mean anything."
          : "Production deploys tag release-*; until the first one, nothing runs that a migration could break.",
      ],
    };
  }
  const names = git(root, "ls-tree", "--name-only", `${tag}:migrations`)
    .split("\n")
    .filter((f) => f.endsWith(".sql"))
    .sort();
  const files = names.map((name) => ({ name, sql: git(root, "show", `${tag}:migrations/${name}`) }));
  let schema: string;
  try {
    schema = git(root, "show", `${tag}:db/schema.ts`);
  } catch {
    return { ok: false, lines: [`${tag} has no db/schema.ts: cannot tell what it reads.`] };
  }
  return compare({ name: tag, schema, files }, current);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { root: { type: "string" } } });
  const root = resolve(values.root ?? join(import.meta.dirname, ".."));
  const result = checkMigrations(root);
  for (const line of result.lines) (result.ok ? console.log : console.error)(`migrations: ${line}`);
  process.exit(result.ok ? 0 : 1);
}
