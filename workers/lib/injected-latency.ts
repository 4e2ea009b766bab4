import { devToolsEnabled } from "@workers/lib/dev-tools";

// Production-like storage latency for a bench run (issue 37 part 4). Locally D1 and R2 are files on this machine, so
// a round trip costs well under a millisecond and work that saves one looks worthless. With dev tools on,
// INJECT_D1_MS and INJECT_R2_MS add that many milliseconds to every D1 round trip (a statement's first/all/run/raw, a
// batch, an exec) and every R2 call the user's object makes. Off by default; never in production (devToolsEnabled is
// false there). The shortcut bench that set them is gone (docs/decisions/0323-no-shortcut-fence.md); a bench run sets
// them through scripts/stack.ts's Worker variables.

type LatencyEnv = Pick<Env, "DEV_TOOLS" | "APP_ENV" | "DB" | "PHOTOS"> & {
  INJECT_D1_MS?: string;
  INJECT_R2_MS?: string;
};

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function millis(value: string | undefined): number {
  const n = Number(value ?? 0);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 1000) : 0;
}

/** `env` with its DB and PHOTOS slowed as configured, or `env` itself when nothing is injected. */
export function withInjectedLatency<E extends LatencyEnv>(env: E): E {
  if (!devToolsEnabled(env)) return env;
  const d1 = millis(env.INJECT_D1_MS);
  const r2 = millis(env.INJECT_R2_MS);
  if (!d1 && !r2) return env;
  return { ...env, DB: d1 ? slowD1(env.DB, d1) : env.DB, PHOTOS: r2 ? slowR2(env.PHOTOS, r2) : env.PHOTOS };
}

const ROUND_TRIPS = new Set(["first", "all", "run", "raw"]);

function slowD1(db: D1Database, ms: number): D1Database {
  return aroundD1(db, () => sleep(ms));
}

/**
 * `db` with `before` awaited ahead of each of its round trips: a statement's first, all, run or raw (`what`: its SQL),
 * a batch ("batch of N") and an exec (its SQL). The one D1 wrapper: the bench's latency above, and the tests that
 * count a request's round trips.
 */
export function aroundD1(db: D1Database, before: (what: string) => void | Promise<void>): D1Database {
  // A batch must be handed the runtime's own statements, so each wrapper remembers the statement it wraps.
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrap = (stmt: D1PreparedStatement, sql: string): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        if (prop === "bind") return (...args: unknown[]) => wrap(target.bind(...args), sql);
        if (typeof prop === "string" && ROUND_TRIPS.has(prop)) {
          return async (...args: unknown[]) => {
            await before(sql);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
    real.set(proxy, stmt);
    return proxy;
  };
  return new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "prepare") return (query: string) => wrap(target.prepare(query), query);
      if (prop === "batch") {
        return async (stmts: D1PreparedStatement[]) => {
          await before(`batch of ${stmts.length}`);
          return target.batch(stmts.map((s) => real.get(s) ?? s));
        };
      }
      if (prop === "exec") {
        return async (query: string) => {
          await before(query);
          return target.exec(query);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const R2_CALLS = new Set(["get", "put", "head", "delete", "list", "createMultipartUpload"]);

function slowR2(bucket: R2Bucket, ms: number): R2Bucket {
  return new Proxy(bucket, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (typeof prop === "string" && R2_CALLS.has(prop)) {
        return async (...args: unknown[]) => {
          await sleep(ms);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}
