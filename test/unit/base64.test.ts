import { decodeBase64Strict } from "@workers/lib/base64";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const cases = () => {
  it("decodes what btoa encoded, every byte value included", () => {
    const bytes = Uint8Array.from({ length: 256 * 3 }, (_, i) => (i * 7) % 256);
    const text = btoa(String.fromCharCode(...bytes));
    expect(decodeBase64Strict(text)).toEqual(bytes);
    expect(decodeBase64Strict("/9j/4A==")).toEqual(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]));
  });

  it("throws on text that is not base64 instead of decoding it into other bytes", () => {
    for (const bad of ["@@@@", "/9j/4A==!", "not-base64", "%2F9j"]) {
      expect(() => decodeBase64Strict(bad), bad).toThrow();
    }
  });
};

describe("decodeBase64Strict", cases);

describe("decodeBase64Strict where the runtime has no Uint8Array.fromBase64 (Node, for the contract tests)", () => {
  const holder = Uint8Array as unknown as { fromBase64?: unknown };
  const native = holder.fromBase64;
  beforeAll(() => {
    expect(typeof native).toBe("function");
    delete holder.fromBase64;
  });
  afterAll(() => {
    holder.fromBase64 = native;
  });
  cases();
});
