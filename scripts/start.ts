import { join } from "node:path";
import { DEMO_PASSWORD } from "../app/shared/seed-constants.ts";
import { ROOT, startStack } from "./stack.ts";

// `npm start`: the production build under local workerd with every emulator.
const port = Number(process.env.PORT ?? 5173);
const emulatorPortBase = Number(process.env.EMULATOR_PORT_BASE ?? 4010);
const started = Date.now();

const stack = await startStack({
  port,
  emulatorPortBase,
  persistDir: join(ROOT, ".wrangler", "state"),
  build: process.env.SKIP_BUILD !== "1",
});

const line = "-".repeat(64);
console.log(`\n${line}
  Stagewise is running at ${stack.url}   (ready in ${((Date.now() - started) / 1000).toFixed(1)} s)

  Demo logins (password: ${DEMO_PASSWORD})
${stack.seeded.map((u) => `    ${u.email.padEnd(20)} ${u.role.padEnd(6)} ${u.credits} credits`).join("\n")}

  Dev mailbox        ${stack.url}/dev/mailbox
  Health             ${stack.url}/api/health
  Emulators          mail :${stack.ports.mail}  AI provider :${stack.ports.provider}  Stripe :${stack.ports.stripe}  Google OAuth :${stack.ports.oauth}  DNS :${stack.ports.dns}  Images draw :${stack.ports.images}
  Check Worker       structure checks off the user's object, its own wrangler dev on :${stack.ports.checker} (ADR 0188)
  Errors (Sentry)    ${`http://127.0.0.1:${stack.ports.sentry}/_emulator/events`}  (each also printed here as [sentry])
  Data               .wrangler/state (kept between starts, but for wrangler's request traces; delete it to start over)

  Press Ctrl-C to stop.
${line}\n`);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping…`);
  // Whatever happens to be running (a hung request, a busy emulator), the processes are gone within 10 s.
  setTimeout(() => process.exit(1), 10_000).unref();
  await stack.stop();
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
