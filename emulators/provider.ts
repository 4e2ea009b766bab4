import { bearer, json, listen } from "./http.ts";

// The AI provider emulator (contract: shared spec provider-api.md). For now it
// checks the bearer key and answers every call with 501; the staging issue fills
// it in with labelled, visibly transformed results.
export async function startProviderEmulator(opts: { port: number; apiKey: string }) {
  return listen("provider", opts.port, (req, _body, res) => {
    if (bearer(req) !== opts.apiKey) return json(res, 401, { error: "Unauthorized", message: "Invalid API key" });
    return json(res, 501, { error: "NotImplemented", message: "The provider emulator does not generate images yet." });
  });
}
