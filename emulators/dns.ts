import { lookup } from "node:dns/promises";
import { json, listen } from "./http.ts";

// Speaks the subset of DNS-over-HTTPS (Cloudflare's JSON form, GET /dns-query?name=&type=A|AAAA) that the SSRF
// guard's resolver uses (workers/lib/safe-url.ts, dohResolver). A name the tests set answers from their list, one
// entry per lookup (its A question moves to the next entry; the last one repeats), so a test can make a name that
// resolves differently on its second lookup and read how many lookups were made. Any other name is looked up on
// this machine, so `npm start` still fetches real photo URLs where there is a network.

interface Query {
  name: string;
  type: string;
  at: string;
}

export async function startDnsEmulator(opts: { port: number }) {
  const steered = new Map<string, { answers: string[][]; asked: number }>();
  const queries: Query[] = [];
  return listen("dns", opts.port, async (req, body, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/dns-query") {
      const name = (url.searchParams.get("name") ?? "").toLowerCase().replace(/\.$/, "");
      const type = url.searchParams.get("type") ?? "A";
      if (!name || (type !== "A" && type !== "AAAA")) return json(res, 400, { Status: 1 });
      queries.push({ name, type, at: new Date().toISOString() });
      const want = type === "A" ? 1 : 28;
      const isV6 = (a: string) => a.includes(":");
      let addresses: string[];
      const set = steered.get(name);
      if (set) {
        if (type === "A") set.asked++;
        addresses = set.answers[Math.min(Math.max(set.asked, 1), set.answers.length) - 1] ?? [];
      } else {
        try {
          addresses = (await lookup(name, { all: true })).map((a) => a.address);
        } catch {
          return json(res, 200, { Status: 3, Answer: [] });
        }
      }
      const answer = addresses
        .filter((a) => (want === 28 ? isV6(a) : !isV6(a)))
        .map((data) => ({ name, type: want, TTL: 0, data }));
      return json(res, 200, { Status: 0, Answer: answer });
    }
    if (req.method === "POST" && url.pathname === "/_emulator/names") {
      const input = JSON.parse(body.toString("utf8")) as { name: string; answers: string[][] };
      steered.set(input.name.toLowerCase(), { answers: input.answers, asked: 0 });
      return json(res, 200, { ok: true });
    }
    if (req.method === "GET" && url.pathname === "/_emulator/queries") {
      const name = url.searchParams.get("name");
      return json(res, 200, name ? queries.filter((q) => q.name === name.toLowerCase()) : queries);
    }
    return json(res, 404, { error: "not found" });
  });
}
