import { bearer, json, listen } from "./http.ts";

// The Stripe emulator. For now it checks the secret key and answers 501; the
// payments issue fills in customers, checkout sessions, the checkout page,
// billing portal sessions and signed webhooks.
export async function startStripeEmulator(opts: { port: number; secretKey: string }) {
  return listen("stripe", opts.port, (req, _body, res) => {
    if (bearer(req) !== opts.secretKey) {
      return json(res, 401, { error: { type: "invalid_request_error", message: "Invalid API Key provided" } });
    }
    return json(res, 501, { error: { type: "api_error", message: "Not emulated yet" } });
  });
}
