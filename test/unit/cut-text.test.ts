import { describe, expect, it } from "vitest";
import { cutText, displayName } from "~/shared/text";
import { photoNameFromFileName } from "~/shared/upload-rules";

// Names are cut on character boundaries (issue 36): never half of a surrogate pair, which D1 would store as U+FFFD,
// and never half of a grapheme cluster.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** Compared as JSON (lone surrogates escaped): a failure's message must not itself carry half a character. */
const shown = (s: string) => JSON.stringify(s);

describe("cutText", () => {
  it("keeps whole emoji, flags and joined sequences at the boundary, within the length", () => {
    const cases: [string, number, string][] = [
      [`${"a".repeat(99)}😀`, 100, "a".repeat(99)],
      [`${"a".repeat(98)}😀x`, 100, `${"a".repeat(98)}😀`],
      [`${"a".repeat(97)}🇫🇷x`, 100, "a".repeat(97)],
      [`${"a".repeat(95)}👩🏽‍💻!`, 100, "a".repeat(95)],
      [`${"a".repeat(99)}é`, 100, `${"a".repeat(99)}é`],
      [`${"a".repeat(99)}e\u0301`, 100, "a".repeat(99)],
      ["short", 100, "short"],
    ];
    for (const [value, max, expected] of cases) {
      const out = cutText(value, max);
      expect(shown(out), shown(value)).toBe(shown(expected));
      expect(out.length).toBeLessThanOrEqual(max);
      expect(LONE_SURROGATE.test(out), shown(value)).toBe(false);
    }
  });

  it("photo and display names cut at 100 never end in half a character", () => {
    const name = photoNameFromFileName(`${"b".repeat(99)}😀😀.jpg`);
    expect(shown(name)).toBe(shown("b".repeat(99)));
    expect(LONE_SURROGATE.test(name)).toBe(false);
    expect(new TextDecoder().decode(new TextEncoder().encode(name))).not.toContain("\uFFFD");
    expect(shown(displayName(`${"c".repeat(99)}🏠 home`, "Untitled"))).toBe(shown("c".repeat(99)));
  });
});
