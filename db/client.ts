import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

// One drizzle instance per D1 binding, made once per isolate: drizzle reads the
// whole schema's relations when it is created (about 0.1 ms), and it holds no
// state of a request, so every request of the isolate shares it.
const instances = new WeakMap<D1Database, ReturnType<typeof make>>();

function make(d1: D1Database) {
  return drizzle(d1, { schema });
}

export function createDb(d1: D1Database) {
  let db = instances.get(d1);
  if (!db) {
    db = make(d1);
    instances.set(d1, db);
  }
  return db;
}

export type Database = ReturnType<typeof createDb>;
export { schema };
