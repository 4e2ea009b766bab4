import type { Server } from "node:http";
import { join } from "node:path";
import { startDnsEmulator } from "./dns.ts";
import { startImagesDrawEmulator } from "./images-draw.ts";
import { startMailEmulator } from "./mail.ts";
import { startOAuthEmulator } from "./oauth.ts";
import { startProviderEmulator } from "./provider.ts";
import { startSentryEmulator } from "./sentry.ts";
import { startStripeEmulator } from "./stripe.ts";

// Local stand-ins for every outside service. Each speaks the real service's HTTP
// contract on 127.0.0.1; none of this code is part of the Worker bundle.

/** The public key of the local sink's DSN (not a secret: the sink accepts only it, so a stray DSN is refused). */
export const SENTRY_LOCAL_KEY = "localsinkkey";

export interface EmulatorPorts {
  mail: number;
  provider: number;
  stripe: number;
  oauth: number;
  dns: number;
  sentry: number;
  /** Draws labels where the Images binding's local stand-in cannot (emulators/images-draw.ts). */
  images: number;
}

export function emulatorPorts(base: number): EmulatorPorts {
  return {
    mail: base,
    provider: base + 1,
    stripe: base + 2,
    oauth: base + 3,
    dns: base + 4,
    sentry: base + 5,
    images: base + 6,
  };
}

export interface RunningEmulators {
  ports: EmulatorPorts;
  /** Variables that point the Worker at the emulators. */
  workerVars: Record<string, string>;
  stop(): Promise<void>;
}

export async function startEmulators(opts: {
  portBase: number;
  stateDir: string;
  vars: Record<string, string>;
  appUrl: string;
}): Promise<RunningEmulators> {
  const ports = emulatorPorts(opts.portBase);
  const local = (port: number) => `http://127.0.0.1:${port}`;
  const servers: Server[] = [];
  servers.push(
    await startMailEmulator({
      port: ports.mail,
      apiKey: opts.vars.MAIL_API_KEY ?? "",
      storeFile: join(opts.stateDir, "emulators", "mail.json"),
    }),
  );
  servers.push(await startProviderEmulator({ port: ports.provider, apiKey: opts.vars.PROVIDER_API_KEY ?? "" }));
  servers.push(
    await startStripeEmulator({
      port: ports.stripe,
      secretKey: opts.vars.STRIPE_SECRET_KEY ?? "",
      webhookSecret: opts.vars.STRIPE_WEBHOOK_SECRET ?? "",
      appUrl: opts.appUrl,
      storeFile: join(opts.stateDir, "emulators", "stripe.json"),
    }),
  );
  servers.push(await startOAuthEmulator({ port: ports.oauth }));
  servers.push(await startDnsEmulator({ port: ports.dns }));
  servers.push(await startSentryEmulator({ port: ports.sentry, publicKey: SENTRY_LOCAL_KEY }));
  servers.push(await startImagesDrawEmulator({ port: ports.images }));
  return {
    ports,
    workerVars: {
      MAIL_API_URL: local(ports.mail),
      PROVIDER_BASE_URL: local(ports.provider),
      STRIPE_API_URL: local(ports.stripe),
      GOOGLE_ISSUER_URL: local(ports.oauth),
      DNS_RESOLVER_URL: `${local(ports.dns)}/dns-query`,
      IMAGES_LOCAL_URL: local(ports.images),
      // Errors go to the local sink (emulators/sentry.ts); production sets its own DSN as a secret, or none.
      SENTRY_DSN: `http://${SENTRY_LOCAL_KEY}@127.0.0.1:${ports.sentry}/1`,
    },
    async stop() {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.closeAllConnections();
              s.close(() => resolve());
            }),
        ),
      );
    },
  };
}
