import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { judge, parseUploadSize, serverGathersWrites, WORKER_GZIP_BUDGET_KIB } from "../../scripts/check-bundle.ts";
import { EDITED_MARK } from "../../scripts/react-dom-strings.ts";

// The bundle budget of `npm test` (scripts/check-bundle.ts, ADR 0181): what it reads from wrangler and how it judges.

const DRY_RUN = `│ Total (10 modules)                  │      │ 2575.82 KiB │
└─────────────────────────────────────┴──────┴─────────────┘
✨ Read 106 files from the assets directory /work/wt-ops/build/client
Total Upload: 3394.26 KiB / gzip: 717.66 KiB
Your Worker has access to the following bindings:`;

test("reads the upload and gzip sizes wrangler deploy --dry-run prints", () => {
  expect(parseUploadSize(DRY_RUN)).toEqual({ kib: 3394.26, gzipKib: 717.66 });
  expect(parseUploadSize("--dry-run: exiting now.")).toBeNull();
});

test("fails above the gzip budget, saying what to do", () => {
  expect(WORKER_GZIP_BUDGET_KIB).toBe(880);
  expect(judge({ kib: 3394.26, gzipKib: 717.66 })).toEqual({
    ok: true,
    line: "Worker upload 3394.26 KiB, gzip 717.66 KiB: within the budget of 880 KiB gzip",
  });
  const over = judge({ kib: 3800, gzipKib: 880.01 });
  expect(over.ok).toBe(false);
  expect(over.line).toContain("OVER the budget of 880 KiB gzip");
  expect(over.line).toContain("ADR 0181");
});

test("finds react-dom's gathered writes in a server build's nested chunks, and says when they are missing", () => {
  const dir = mkdtempSync(join(tmpdir(), "gathered-"));
  try {
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "index.js"), "export default {};");
    writeFileSync(join(dir, "assets", "server-build.js"), "function completeWriting(destination) {}");
    expect(serverGathersWrites(dir)).toBe(false);
    writeFileSync(join(dir, "assets", "server-build.js"), `${EDITED_MARK}}`);
    expect(serverGathersWrites(dir)).toBe(true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
