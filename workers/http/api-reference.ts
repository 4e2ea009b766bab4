// The public API's OpenAPI document for the /developers page. It is built from
// the route declarations in workers/api/v1, which register it here when the
// Worker starts (pages may not import workers/api, and must not hold a copy).

type DocumentBuilder = (origin: string) => unknown;

let builder: DocumentBuilder | null = null;

export function provideApiReference(build: DocumentBuilder): void {
  builder = build;
}

/** The OpenAPI 3.1 document of /api/v1, or null before the API module has loaded. */
export function apiReference(origin: string): unknown {
  return builder ? builder(origin) : null;
}
