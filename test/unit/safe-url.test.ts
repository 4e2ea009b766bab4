import { SIGNATURE_HEADER, signatureHeader, verifySignatureHeader } from "@workers/lib/callback-signing";
import { addressKind, checkUrl, checkUrlSyntax, guardedFetch } from "@workers/lib/safe-url";
import { describe, expect, it } from "vitest";

const PROD = { allowLoopback: false };
const DEV = { allowLoopback: true };

describe("the SSRF guard", () => {
  it("classifies IPv4 and IPv6 literals, including mapped and shared ranges", () => {
    expect(addressKind("8.8.8.8")).toBe("public");
    expect(addressKind("127.0.0.1")).toBe("loopback");
    expect(addressKind("[::1]")).toBe("loopback");
    for (const a of [
      "10.1.2.3",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "224.0.0.1",
      "[fe80::1]",
      "[fd12::1]",
      "[::ffff:10.0.0.1]",
      "[::]",
    ]) {
      expect(addressKind(a), a).toBe("private");
    }
    expect(addressKind("172.32.0.1")).toBe("public");
    expect(addressKind("[2606:4700::1111]")).toBe("public");
    expect(addressKind("example.com")).toBeNull();
  });

  it("refuses non-http schemes, credentials, local names and private literals in production", () => {
    for (const url of [
      "ftp://example.com/a",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "http://u:p@example.com/",
      "http://localhost/",
      "http://printer.local/",
      "http://intranet/",
      "http://127.0.0.1/",
      "http://0x7f.1/",
      "http://2130706433/",
    ]) {
      expect(checkUrlSyntax(url, PROD).ok, url).toBe(false);
    }
    expect(checkUrlSyntax("https://example.com/a.jpg", PROD).ok).toBe(true);
  });

  it("lets development reach loopback but nothing else private", () => {
    expect(checkUrlSyntax("http://127.0.0.1:8080/a.jpg", DEV).ok).toBe(true);
    expect(checkUrlSyntax("http://localhost:8080/a.jpg", DEV).ok).toBe(true);
    expect(checkUrlSyntax("http://10.0.0.1/a.jpg", DEV).ok).toBe(false);
  });

  it("refuses a public-looking name that resolves to a private address, and one that does not resolve", async () => {
    const resolve = async (host: string) => (host === "evil.example" ? ["93.184.216.34", "10.0.0.5"] : []);
    expect((await checkUrl("https://evil.example/a.jpg", { ...PROD, resolve })).ok).toBe(false);
    expect((await checkUrl("https://nowhere.example/a.jpg", { ...PROD, resolve })).ok).toBe(false);
    const good = async () => ["93.184.216.34"];
    expect((await checkUrl("https://photos.example/a.jpg", { ...PROD, resolve: good })).ok).toBe(true);
  });

  it("checks every redirect hop", async () => {
    const fetchImpl = (async (url: string) =>
      url.startsWith("https://photos.example/")
        ? new Response(null, { status: 302, headers: { Location: "http://169.254.169.254/latest" } })
        : new Response("secret")) as unknown as typeof fetch;
    const res = await guardedFetch(
      "https://photos.example/a.jpg",
      { ...PROD, resolve: async () => ["93.184.216.34"] },
      {
        timeoutMs: 1000,
        fetchImpl,
      },
    );
    expect(res.ok).toBe(false);
  });
});

describe("callback signatures", () => {
  it("verifies the exact body and timestamp, and refuses a changed body, another secret or an old timestamp", async () => {
    const now = 1_800_000_000;
    const body = JSON.stringify({ type: "job.succeeded" });
    const header = await signatureHeader("whsec_a", now, body);
    expect(SIGNATURE_HEADER).toBe("Stagewise-Signature");
    expect(header).toMatch(/^t=1800000000,v1=[0-9a-f]{64}$/);
    expect(await verifySignatureHeader("whsec_a", header, body, now + 10)).toBe(true);
    expect(await verifySignatureHeader("whsec_a", header, `${body} `, now)).toBe(false);
    expect(await verifySignatureHeader("whsec_b", header, body, now)).toBe(false);
    expect(await verifySignatureHeader("whsec_a", header, body, now + 301)).toBe(false);
    expect(await verifySignatureHeader("whsec_a", null, body, now)).toBe(false);
  });
});
