// D1 binds at most 100 parameters a statement, and drizzle's inArray / notInArray bind one per value: over a list a
// user sizes (a batch's 100 photos plus the user's id) the statement fails, as a 500, at the product's own limit.
// Lists go through db/lists.ts (inList / notInList: the whole list as one JSON parameter; inQuery: a subquery).
// Fails, naming file and line, on:
// - inArray / notInArray anywhere but db/lists.ts, unless its list is written out in the source with literal
//   values only (`inArray(jobs.status, ["queued", "running"])`: as long as the line, never longer);
// - raw SQL (a sql`…` template) that puts an interpolated value straight after IN: drizzle spreads an array there
//   into one parameter per element.
// Run by `npm run lint`. docs/decisions/0205-lists-bind-as-one-parameter.md
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ROOTS, root, walk } from "./check-layers.ts";

/** The one file that may call inArray / notInArray over a list that is not written out. */
export const LIST_HELPER = "db/lists.ts";
const LIST_CALLS = new Set(["inArray", "notInArray"]);

function isLiteral(e: ts.Expression): boolean {
  return (
    ts.isStringLiteral(e) ||
    ts.isNumericLiteral(e) ||
    ts.isNoSubstitutionTemplateLiteral(e) ||
    (ts.isPrefixUnaryExpression(e) && ts.isNumericLiteral(e.operand))
  );
}

function calleeName(e: ts.Expression): string | null {
  if (ts.isIdentifier(e)) return e.text;
  if (ts.isPropertyAccessExpression(e)) return e.name.text;
  return null;
}

/** The text of a sql`…` template before each interpolation ends with IN, or IN and an opening parenthesis. */
const IN_BEFORE_VALUE = /\bin\s*\(?\s*$/i;

/** What is wrong in one file, as "file:line: message"; empty when nothing is. */
export function listProblems(file: string, text: string): string[] {
  if (file === LIST_HELPER) return [];
  const source = ts.createSourceFile(
    file,
    text,
    ts.ScriptTarget.Latest,
    true,
    file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const problems: string[] = [];
  const at = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
  const visit = (node: ts.Node) => {
    // Renamed on import (`import { inArray as within }`), a call would escape the check by name.
    if (ts.isImportSpecifier(node) && LIST_CALLS.has((node.propertyName ?? node.name).text) && node.propertyName) {
      problems.push(`${at(node)}: ${node.propertyName.text} imported under another name: call it by its own name.`);
    }
    if (ts.isCallExpression(node)) {
      const name = calleeName(node.expression);
      if (name && LIST_CALLS.has(name)) {
        const list = node.arguments[1];
        const written = list && ts.isArrayLiteralExpression(list) && list.elements.every(isLiteral);
        if (!written) {
          problems.push(
            `${at(node)}: ${name} over a list that is not written out: use inList / notInList / inQuery (${LIST_HELPER}); D1 binds at most 100 parameters a statement.`,
          );
        }
      }
    }
    if (
      ts.isTaggedTemplateExpression(node) &&
      calleeName(node.tag) === "sql" &&
      ts.isTemplateExpression(node.template)
    ) {
      const parts = [node.template.head, ...node.template.templateSpans.slice(0, -1).map((s) => s.literal)];
      node.template.templateSpans.forEach((span, i) => {
        if (IN_BEFORE_VALUE.test(parts[i]!.text)) {
          problems.push(
            `${at(span.expression)}: a value interpolated straight after IN in raw SQL: use inList / inQuery (${LIST_HELPER}).`,
          );
        }
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return problems;
}

/** Every problem in `files`. */
export function allListProblems(files: string[], read: (f: string) => string): string[] {
  return files.flatMap((f) => listProblems(f, read(f)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const files = ROOTS.flatMap((r) => walk(r));
  const problems = allListProblems(files, (f) => readFileSync(join(root, f), "utf8"));
  if (problems.length > 0) {
    console.error(`${problems.join("\n")}\n(docs/decisions/0205-lists-bind-as-one-parameter.md)`);
    process.exit(1);
  }
  console.log(`lists: ${files.length} files, every list bound as one parameter or written out`);
}
