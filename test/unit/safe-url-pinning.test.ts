import type { SocketConnect } from "@workers/lib/pinned-http";
import { addressKind, checkUrl, checkUrlSyntax, guardedFetch, type UrlPolicy } from "@workers/lib/safe-url";
import { describe, expect, it } from "vitest";

// The SSRF guard's second round (docs/decisions/0152-ssrf-the-checked-address-is-the-one-connected-to.md): IANA's
// special-purpose ranges, the standard ports, our own origin, and the address checked being the address connected
// to. The sockets here are stand-ins that record where they were opened and what was written to them.

const PROD: UrlPolicy = { allowLoopback: false, ownOrigin: "https://stagewise.app" };
const DEV: UrlPolicy = { allowLoopback: true, ownOrigin: "http://localhost:5173" };

interface FakeServer {
  opened: { hostname: string; port: number }[];
  written: string;
  closed: number;
}

/** A connect() whose sockets answer with `chunks` (or refuse to open, for the addresses in `refuse`). */
function fakeConnect(chunks: (string | Uint8Array)[], opts: { refuse?: string[]; hang?: boolean } = {}) {
  const server: FakeServer = { opened: [], written: "", closed: 0 };
  const connect = ((address: { hostname: string; port: number }) => {
    server.opened.push(address);
    const refused = opts.refuse?.includes(address.hostname);
    const enc = new TextEncoder();
    let i = 0;
    const readable = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (opts.hang) return new Promise<void>(() => undefined);
        const next = chunks[i++];
        if (next === undefined) controller.close();
        else controller.enqueue(typeof next === "string" ? enc.encode(next) : next);
      },
    });
    const writable = new WritableStream<Uint8Array>({
      write(chunk) {
        server.written += new TextDecoder().decode(chunk);
      },
    });
    return {
      opened: refused ? Promise.reject(new Error("connection refused")) : Promise.resolve({}),
      closed: Promise.resolve(),
      readable,
      writable,
      close: async () => {
        server.closed++;
      },
      startTls: () => {
        throw new Error("not here");
      },
    };
  }) as unknown as SocketConnect;
  return { connect, server };
}

/** A resolver that answers `answers[n]` to its n-th question (the last one repeats), counting the questions. */
function changingResolver(answers: string[][]) {
  const asked: string[] = [];
  const resolve = async (host: string) => {
    asked.push(host);
    return answers[Math.min(asked.length - 1, answers.length - 1)]!;
  };
  return { resolve, asked };
}

const neverFetch = (async () => {
  throw new Error("fetch() must not be called for a pinned http request");
}) as unknown as typeof fetch;

describe("IANA special-purpose ranges", () => {
  it("judges IPv6 forms that carry an IPv4 address by that address, and refuses Teredo, NAT64 and the rest", () => {
    const cases: [string, "public" | "loopback" | "private"][] = [
      ["[2002:7f00:1::]", "private"], // 6to4 of 127.0.0.1: not our loopback, and never public
      ["[2002:c0a8:101::1]", "private"], // 6to4 of 192.168.1.1
      ["[2002:a9fe:a9fe::1]", "private"], // 6to4 of 169.254.169.254
      ["[2002:808:808::1]", "public"], // 6to4 of 8.8.8.8
      ["[2001:0:4136:e378:8000:63bf:3fff:fdd2]", "private"], // Teredo
      ["[2001::1]", "private"],
      ["[2001:2::1]", "private"], // benchmarking, in 2001::/23
      ["[::ffff:7f00:1]", "loopback"], // IPv4-mapped 127.0.0.1
      ["[::ffff:c0a8:101]", "private"], // IPv4-mapped 192.168.1.1
      ["[::ffff:808:808]", "public"], // IPv4-mapped 8.8.8.8
      ["[::ffff:0:c0a8:101]", "private"], // SIIT-translated 192.168.1.1
      ["[::ffff:0:7f00:1]", "private"], // SIIT-translated 127.0.0.1
      ["[::7f00:1]", "private"], // IPv4-compatible 127.0.0.1
      ["[64:ff9b::808:808]", "private"], // NAT64
      ["[64:ff9b:1::1]", "private"],
      ["[fec0::1]", "private"], // site-local
      ["[100::1]", "private"], // discard-only
      ["[5f00::1]", "private"], // SRv6 SIDs
      ["[3fff::1]", "private"], // documentation
      ["[2001:db8::1]", "private"],
      ["[2620:4f:8000::1]", "private"], // AS112
      ["[ff02::1]", "private"],
      ["192.88.99.1", "private"], // 6to4 relay anycast
      ["192.0.0.9", "private"],
      ["192.31.196.1", "private"],
      ["192.52.193.1", "private"],
      ["192.175.48.1", "private"],
      ["198.19.255.255", "private"],
      ["255.255.255.255", "private"],
      ["240.0.0.1", "private"],
      ["100.127.255.255", "private"],
      ["100.128.0.1", "public"],
      ["198.20.0.1", "public"],
      ["[2606:4700::1111]", "public"],
    ];
    for (const [address, kind] of cases) expect(addressKind(address), address).toBe(kind);
  });

  it("refuses the observed URLs, in production and in development", () => {
    for (const url of [
      "http://[2002:7f00:1::]/a.jpg",
      "http://[2002:c0a8:101::1]/a.jpg",
      "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/a.jpg",
      "http://[::ffff:0:a9fe:a9fe]/latest",
      "http://[fec0::1]/",
      "http://[100::1]/",
      "http://192.88.99.1/",
    ]) {
      expect(checkUrlSyntax(url, PROD).ok, url).toBe(false);
      expect(checkUrlSyntax(url, DEV).ok, url).toBe(false);
    }
  });
});

describe("ports and our own origin", () => {
  it("takes only the standard port of the scheme; development's loopback may use any", () => {
    const refused = [
      "https://example.com:6379/",
      "https://example.com:8443/a.jpg",
      "http://example.com:443/",
      "http://example.com:22/",
    ];
    for (const url of refused) {
      const res = checkUrlSyntax(url, PROD);
      expect(res.ok, url).toBe(false);
      if (!res.ok) expect(res.reason).toMatch(/standard port/);
    }
    for (const url of ["https://example.com:443/a.jpg", "http://example.com:80/a.jpg", "https://example.com/a.jpg"]) {
      expect(checkUrlSyntax(url, PROD).ok, url).toBe(true);
    }
    expect(checkUrlSyntax("http://127.0.0.1:6379/", PROD).ok).toBe(false);
    expect(checkUrlSyntax("http://127.0.0.1:6379/", DEV).ok).toBe(true);
    expect(checkUrlSyntax("http://example.com:8080/", DEV).ok).toBe(false);
  });

  it("refuses our own origin's host under any scheme and port, and a local origin's port on any loopback address", () => {
    for (const url of [
      "https://stagewise.app/api/v1/balance",
      "http://stagewise.app/",
      "https://STAGEWISE.app./x",
      "https://stagewise.app:8443/",
    ]) {
      const res = checkUrlSyntax(url, PROD);
      expect(res.ok, url).toBe(false);
      if (!res.ok) expect(res.reason, url).toBe("The address points to Stagewise itself.");
    }
    expect(checkUrlSyntax("https://photos.stagewise-cdn.example/a.jpg", PROD).ok).toBe(true);
    for (const url of [
      "http://localhost:5173/api/dev/users",
      "http://127.0.0.1:5173/",
      "http://[::1]:5173/",
      "http://127.0.0.2:5173/",
    ]) {
      expect(checkUrlSyntax(url, DEV).ok, url).toBe(false);
    }
    expect(checkUrlSyntax("http://127.0.0.1:5174/hook", DEV).ok).toBe(true);
  });
});

describe("the address checked is the address connected to", () => {
  it("looks a name up once and opens the socket to that answer, never to what a second lookup would say", async () => {
    const dns = changingResolver([["93.184.216.34"], ["10.0.0.1"]]);
    const { connect, server } = fakeConnect(["HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"]);
    const res = await guardedFetch(
      "http://rebind.example/a.jpg",
      { ...PROD, resolve: dns.resolve, connect },
      { method: "GET", timeoutMs: 2000, fetchImpl: neverFetch },
    );
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(await res.response.text()).toBe("hello");
    expect(dns.asked).toEqual(["rebind.example"]);
    expect(server.opened).toEqual([{ hostname: "93.184.216.34", port: 80 }]);
    expect(server.written).toMatch(/^GET \/a\.jpg HTTP\/1\.1\r\nHost: rebind\.example\r\n/);
    expect(server.written).toContain("Connection: close\r\n");
  });

  it("checks every hop's own lookup: a redirect to the same name that now answers a private address is refused", async () => {
    const dns = changingResolver([["93.184.216.34"], ["10.0.0.1"]]);
    const { connect, server } = fakeConnect(["HTTP/1.1 302 Found\r\nLocation: /b.jpg\r\nContent-Length: 0\r\n\r\n"]);
    const res = await guardedFetch(
      "http://rebind.example/a.jpg",
      { ...PROD, resolve: dns.resolve, connect },
      { method: "GET", timeoutMs: 2000, fetchImpl: neverFetch },
    );
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.kind).toBe("refused");
    expect(dns.asked).toEqual(["rebind.example", "rebind.example"]);
    expect(server.opened.map((o) => o.hostname)).toEqual(["93.184.216.34"]);
  });

  it("refuses a name with any private answer before any connection", async () => {
    const dns = changingResolver([["93.184.216.34", "2002:7f00:1::"]]);
    const { connect, server } = fakeConnect([]);
    const res = await guardedFetch(
      "http://mixed.example/a.jpg",
      { ...PROD, resolve: dns.resolve, connect },
      { timeoutMs: 2000, fetchImpl: neverFetch },
    );
    expect(res).toMatchObject({ ok: false, kind: "refused" });
    expect(server.opened).toHaveLength(0);
  });

  it("tries the checked answers in order when one does not accept the connection", async () => {
    const dns = changingResolver([["93.184.216.34", "93.184.216.35"]]);
    const { connect, server } = fakeConnect(["HTTP/1.1 204 No Content\r\n\r\n"], { refuse: ["93.184.216.34"] });
    const res = await guardedFetch(
      "http://two.example/",
      { ...PROD, resolve: dns.resolve, connect },
      { timeoutMs: 2000, fetchImpl: neverFetch },
    );
    expect(res.ok && res.response.status).toBe(204);
    expect(server.opened.map((o) => o.hostname)).toEqual(["93.184.216.34", "93.184.216.35"]);
    expect(dns.asked).toHaveLength(1);
  });

  it("sends https to the checked name through fetch (the certificate binds it), and nothing when the check fails", async () => {
    const seen: string[] = [];
    const fetchImpl = (async (url: string) => {
      seen.push(url);
      return new Response("ok");
    }) as unknown as typeof fetch;
    const { connect, server } = fakeConnect([]);
    const good = await guardedFetch(
      "https://photos.example/a.jpg",
      { ...PROD, resolve: async () => ["93.184.216.34"], connect },
      { timeoutMs: 2000, fetchImpl },
    );
    expect(good.ok).toBe(true);
    expect(seen).toEqual(["https://photos.example/a.jpg"]);
    const bad = await guardedFetch(
      "https://photos.example/a.jpg",
      { ...PROD, resolve: async () => ["127.0.0.1"], connect },
      { timeoutMs: 2000, fetchImpl },
    );
    expect(bad.ok).toBe(false);
    expect(seen).toHaveLength(1);
    expect(server.opened).toHaveLength(0);
  });

  it("checkUrl hands back exactly the addresses it checked", async () => {
    const res = await checkUrl("http://photos.example/a.jpg", { ...PROD, resolve: async () => ["93.184.216.34"] });
    expect(res).toMatchObject({ ok: true, addresses: ["93.184.216.34"] });
    expect(await checkUrl("http://93.184.216.34/a.jpg", PROD)).toMatchObject({
      ok: true,
      addresses: ["93.184.216.34"],
    });
  });
});

describe("HTTP/1.1 over the pinned socket", () => {
  const get = (
    chunks: (string | Uint8Array)[],
    init: { maxBodyBytes?: number; timeoutMs?: number; method?: string; body?: string } = {},
    hang = false,
  ) => {
    const { connect, server } = fakeConnect(chunks, { hang });
    const res = guardedFetch(
      "http://93.184.216.34/p/a.jpg?x=1",
      { ...PROD, connect },
      {
        method: init.method ?? "GET",
        body: init.body,
        timeoutMs: init.timeoutMs ?? 2000,
        maxBodyBytes: init.maxBodyBytes,
        fetchImpl: neverFetch,
      },
    );
    return { res, server };
  };

  it("reads chunked bodies, skips 1xx answers, and writes a POST's body with its length", async () => {
    const { res, server } = get(
      [
        "HTTP/1.1 100 Continue\r\n\r\n",
        "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\nX-A: b\r\n\r\n",
        "3\r\nabc\r\n",
        "4;ext=1\r\ndefg\r\n0\r\nTrailer: x\r\n\r\n",
      ],
      { method: "POST", body: '{"a":1}' },
    );
    const out = await res;
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.response.status).toBe(201);
    expect(out.response.headers.get("x-a")).toBe("b");
    expect(await out.response.text()).toBe("abcdefg");
    expect(server.written).toMatch(/^POST \/p\/a\.jpg\?x=1 HTTP\/1\.1\r\nHost: 93\.184\.216\.34\r\n/);
    expect(server.written).toContain("Content-Length: 7\r\n");
    expect(server.written.endsWith('\r\n\r\n{"a":1}')).toBe(true);
    expect(server.closed).toBeGreaterThan(0);
  });

  it("reads a body delimited by the end of the connection", async () => {
    const { res } = get(["HTTP/1.0 200 OK\r\n\r\npart one, ", "part two"]);
    const out = await res;
    expect(out.ok && (await out.response.text())).toBe("part one, part two");
  });

  it("errors the body past its cap, and refuses answers that are not HTTP or whose head never ends", async () => {
    const big = get(["HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", "x".repeat(100)], { maxBodyBytes: 10 });
    const out = await big.res;
    expect(out.ok).toBe(true);
    if (out.ok) await expect(out.response.text()).rejects.toThrow(/larger than allowed/);

    const notHttp = await get(["SSH-2.0-OpenSSH_9.6\r\n\r\n"]).res;
    expect(notHttp).toMatchObject({ ok: false, kind: "network", reason: "The address did not answer with HTTP." });

    const endless = await get(["HTTP/1.1 200 OK\r\n", `X-Pad: ${"a".repeat(40_000)}`]).res;
    expect(endless.ok).toBe(false);

    const split = await get(["HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"]).res;
    expect(split).toMatchObject({ ok: false, reason: "The address answered with a malformed Content-Length." });
  });

  it("gives up when the answer does not come in time", async () => {
    const started = Date.now();
    const out = await get([], { timeoutMs: 200 }, true).res;
    expect(out).toMatchObject({ ok: false, kind: "timeout" });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
