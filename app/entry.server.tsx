import { requestContext } from "@workers/http/context";
import { log } from "@workers/lib/log";
import { isbot } from "isbot";
// react-dom's Node build: the same renderToReadableStream, writing strings into its buffer with encodeInto
// instead of allocating a Uint8Array per string as the edge build does (ADR 0147; needs nodejs_compat).
import { renderToReadableStream } from "react-dom/server.node";
import type { EntryContext, RouterContextProvider } from "react-router";
import { isRouteErrorResponse, ServerRouter } from "react-router";
import { APP_CSS } from "~/lib/app-css.server";
import { InlineCssProvider } from "~/lib/inline-css";
import { NonceProvider } from "~/lib/nonce";

export const streamTimeout = 5_000;

export default async function handleRequest(
  request: Request,
  responseStatusCode: number,
  responseHeaders: Headers,
  routerContext: EntryContext,
  loadContext: RouterContextProvider,
) {
  const { nonce } = loadContext.get(requestContext);
  let shellRendered = false;
  const body = await renderToReadableStream(
    <NonceProvider value={nonce}>
      <InlineCssProvider value={APP_CSS}>
        <ServerRouter context={routerContext} url={request.url} nonce={nonce} />
      </InlineCssProvider>
    </NonceProvider>,
    {
      nonce,
      signal: AbortSignal.timeout(streamTimeout + 1_000),
      onError(error: unknown) {
        responseStatusCode = 500;
        if (shellRendered) log.error("render error after the shell", { err: error, where: "render" });
      },
    },
  );
  shellRendered = true;
  const userAgent = request.headers.get("user-agent");
  if ((userAgent && isbot(userAgent)) || routerContext.isSpaMode) await body.allReady;
  responseHeaders.set("Content-Type", "text/html; charset=utf-8");
  return new Response(body, { headers: responseHeaders, status: responseStatusCode });
}

export function handleError(error: unknown, { request }: { request: Request }) {
  if (request.signal.aborted) return;
  // A 4xx the router answers itself (a POST to a page without an action, a cross-site form): the request's fault,
  // logged but never reported as an error of ours (docs/decisions/0183).
  if (isRouteErrorResponse(error) && error.status < 500) {
    log.warn("request refused by the router", { status: error.status, method: request.method });
    return;
  }
  log.error("render error", { err: error, where: "render", method: request.method });
}
