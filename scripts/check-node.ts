// Fails early, with the fix, when npm scripts are not running on Node 24.
import { assertNode24 } from "./stack.ts";

try {
  assertNode24();
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
