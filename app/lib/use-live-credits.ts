import { useEffect, useState } from "react";
import type { LiveCredits } from "~/shared/live-credits";
import { api } from "./api";

// The signed-in user's balance and plan, kept current while the page is open:
// the user's Durable Object pushes every change over a WebSocket
// (GET /api/me/live); when that cannot connect, the page polls /api/me.
// See docs/decisions/0023-live-balance-push.md.

export type { LiveCredits };

const POLL_MS = 30_000;
const PING_MS = 30_000;
const MAX_RETRY_MS = 30_000;

function parse(value: unknown): LiveCredits | null {
  if (!value || typeof value !== "object") return null;
  const v = value as { credits?: unknown; plan?: { name?: unknown; credits?: unknown } | null };
  if (typeof v.credits !== "number") return null;
  const plan =
    v.plan && typeof v.plan.name === "string" && typeof v.plan.credits === "number"
      ? { name: v.plan.name, credits: v.plan.credits }
      : null;
  return { credits: v.credits, plan };
}

/** `initial` comes from the page's loader; its newer values (after a revalidation) win too. */
export function useLiveCredits(initial: LiveCredits): LiveCredits & { live: boolean } {
  const [state, setState] = useState(initial);
  const [live, setLive] = useState(false);
  // A new value from the loader (e.g. after a form submission) replaces what was pushed before it.
  const initialKey = JSON.stringify(initial);
  const [seenKey, setSeenKey] = useState(initialKey);
  if (seenKey !== initialKey) {
    setSeenKey(initialKey);
    setState(initial);
  }

  useEffect(() => {
    let ws: WebSocket | null = null;
    let stopped = false;
    let retries = 0;
    let retryTimer: ReturnType<typeof setTimeout> | undefined;
    let pollTimer: ReturnType<typeof setInterval> | undefined;
    let pingTimer: ReturnType<typeof setInterval> | undefined;

    const apply = (value: unknown) => {
      const next = parse(value);
      if (next) setState(next);
    };
    const poll = async () => {
      // Null when offline: the next poll or reconnect tries again.
      const answer = await api.me();
      if (answer?.status === 401) stopped = true;
      else if (answer?.ok) apply(answer.body);
    };
    const startPolling = () => {
      pollTimer ??= setInterval(() => void poll(), POLL_MS);
    };
    const stopPolling = () => {
      clearInterval(pollTimer);
      pollTimer = undefined;
    };
    const connect = () => {
      if (stopped) return;
      if (typeof WebSocket === "undefined") return startPolling();
      const url = new URL("/api/me/live", window.location.href);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      const socket = new WebSocket(url);
      ws = socket;
      socket.onopen = () => {
        retries = 0;
        setLive(true);
        stopPolling();
        pingTimer = setInterval(() => socket.readyState === WebSocket.OPEN && socket.send("ping"), PING_MS);
      };
      socket.onmessage = (e) => {
        if (typeof e.data !== "string" || e.data === "pong") return;
        try {
          const message = JSON.parse(e.data) as { type?: string };
          if (message.type === "balance") apply(message);
        } catch {
          // Not ours.
        }
      };
      socket.onclose = () => {
        setLive(false);
        clearInterval(pingTimer);
        if (stopped) return;
        startPolling();
        void poll();
        retryTimer = setTimeout(connect, Math.min(MAX_RETRY_MS, 1000 * 2 ** retries++));
      };
    };
    const onVisible = () => {
      if (document.visibilityState !== "visible") return;
      if (ws?.readyState === WebSocket.OPEN) ws.send("refresh");
      else void poll();
    };

    connect();
    document.addEventListener("visibilitychange", onVisible);
    return () => {
      stopped = true;
      clearTimeout(retryTimer);
      clearInterval(pingTimer);
      stopPolling();
      document.removeEventListener("visibilitychange", onVisible);
      ws?.close();
    };
  }, []);

  return { ...state, live };
}
