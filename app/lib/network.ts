// Is the network there? (docs/decisions/0130-uploads-survive-the-tab.md)
// navigator.onLine and the online/offline events say when the phone knows it
// is offline; a small probe (GET /api/health, any answer counts) catches the
// cases the flag misses: a captive portal, a dead Wi-Fi with the flag still
// up. Uploads ask after a failed request and, when unreachable, wait here
// instead of spending their retry window.
import { api } from "./api";
import type { NetworkWatch } from "./upload-task";
import { abortableSleep } from "./upload-transport";

const PROBE_TIMEOUT_MS = 5000;
const PROBE_EVERY_MS = 5000;

async function probe(signal: AbortSignal): Promise<boolean> {
  if (typeof navigator !== "undefined" && navigator.onLine === false) return false;
  const timeout = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  try {
    await api.health(AbortSignal.any([signal, timeout]));
    return true;
  } catch {
    if (signal.aborted) throw new DOMException("The upload was interrupted.", "AbortError");
    return false;
  }
}

/** Resolves at the next `online` event or after `ms`, whichever comes first. */
function onlineOrAfter(ms: number, signal: AbortSignal): Promise<void> {
  if (typeof window === "undefined") return abortableSleep(ms, signal);
  const wake = new AbortController();
  const onOnline = () => wake.abort();
  window.addEventListener("online", onOnline, { once: true });
  return abortableSleep(ms, AbortSignal.any([signal, wake.signal]))
    .catch((err) => {
      if (signal.aborted) throw err;
    })
    .finally(() => window.removeEventListener("online", onOnline));
}

export const browserNetwork: NetworkWatch = {
  reachable: probe,
  async waitOnline(signal) {
    for (;;) {
      await onlineOrAfter(PROBE_EVERY_MS, signal);
      if (await probe(signal)) return;
    }
  },
};
