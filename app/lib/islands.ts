// The landing page without React in the browser (docs/decisions/0136-landing-page-islands.md).
//
// `/` is the page most visitors open first, on a phone, often on a slow
// network. Its HTML already works without JavaScript: the menu and the FAQ are
// <details>, the links are plain links, the before/after sliders are rendered
// at 50%. Hydrating the whole React Router app only to make three things move
// cost about 120 KB of gzipped JavaScript. Instead the document loads no
// modules at all and carries this one small script, which:
//   - makes every before/after slider (react-compare-slider's server markup)
//     follow the pointer and the arrow keys, as the library does;
//   - reveals the feature cards once they scroll into view (and never hides
//     them for people who prefer reduced motion);
//   - keeps one FAQ item open at a time in browsers without <details name>;
//   - closes the phone menu after a choice and on Escape, as the hydrated menu does;
//   - fills the hero's figures from GET /api/figures when enough jobs were measured (ADR 0185), by text only;
//   - marks the document as ready (`data-hydrated`), as the hydrated pages do.
//
// It is serialised with Function.prototype.toString into an inline script, so
// the function must be self-contained: no imports, no outer variables.

export function enhanceLandingPage(): void {
  const doc = document;
  const STEP = 5;

  for (const root of Array.from(doc.querySelectorAll<HTMLElement>("[data-rcs=root]"))) {
    const handle = root.querySelector<HTMLElement>("[role=slider]");
    let position = 50;
    let dragging = false;
    const set = (value: number) => {
      position = Math.min(100, Math.max(0, value));
      root.style.setProperty("--rcs-raw-position", `${position}%`);
      handle?.setAttribute("aria-valuenow", String(Math.round(position)));
    };
    const fromPointer = (e: PointerEvent) => {
      const box = root.getBoundingClientRect();
      if (box.width > 0) set(((e.clientX - box.left) / box.width) * 100);
    };
    // On a touch screen only the handle drags, so the page still scrolls over the pictures.
    const target = matchMedia("(pointer: coarse)").matches && handle ? handle : root;
    target.addEventListener("pointerdown", (e) => {
      if (e.button !== 0) return;
      e.preventDefault();
      dragging = true;
      target.setPointerCapture(e.pointerId);
      fromPointer(e);
    });
    target.addEventListener("pointermove", (e) => {
      if (dragging) fromPointer(e);
    });
    const stop = () => {
      dragging = false;
    };
    target.addEventListener("pointerup", stop);
    target.addEventListener("pointercancel", stop);
    handle?.addEventListener("keydown", (e) => {
      const up = e.key === "ArrowRight" || e.key === "ArrowUp";
      const down = e.key === "ArrowLeft" || e.key === "ArrowDown";
      if (!up && !down) return;
      e.preventDefault();
      set(position + (up ? STEP : -STEP));
    });
    handle?.addEventListener("click", () => handle.focus());
  }

  const calm = matchMedia("(prefers-reduced-motion: reduce)").matches;
  if (!calm && typeof IntersectionObserver !== "undefined") {
    for (const el of Array.from(doc.querySelectorAll<HTMLElement>("[data-reveal-once]"))) {
      // Never hide what is already on screen.
      if (el.getBoundingClientRect().top < innerHeight) continue;
      el.dataset.reveal = "hidden";
      const io = new IntersectionObserver(
        (entries) => {
          if (!entries.some((e) => e.isIntersecting)) return;
          el.dataset.reveal = "shown";
          io.disconnect();
        },
        { threshold: 0.1 },
      );
      io.observe(el);
    }
  }

  // <details name="…"> is exclusive by itself in current browsers; this covers the older ones.
  doc.addEventListener(
    "toggle",
    (e) => {
      const d = e.target as HTMLDetailsElement;
      const name = d.getAttribute?.("name");
      if (!(d instanceof HTMLDetailsElement) || !d.open || !name) return;
      for (const other of Array.from(doc.querySelectorAll<HTMLDetailsElement>(`details[name="${name}"][open]`))) {
        if (other !== d) other.open = false;
      }
    },
    true,
  );

  for (const menu of Array.from(doc.querySelectorAll<HTMLDetailsElement>("details[data-menu]"))) {
    menu.addEventListener("click", (e) => {
      if ((e.target as Element).closest("a")) menu.open = false;
    });
    menu.addEventListener("keydown", (e) => {
      if (e.key !== "Escape" || !menu.open) return;
      menu.open = false;
      menu.querySelector("summary")?.focus();
    });
  }

  // A prerendered page is the signed-out page for everyone (docs/decisions/0145): the signed-in hint cookie (no
  // secret in it; the server checks every request itself) shows Logout instead of Login, Admin to admins, and
  // sends the page's sign-up links ("Get Started", "Start Staging Now") to the dashboard for someone who can stage.
  const hint = /(?:^|;\s*)sw_nav=((?:user|admin)(?:-stager)?)(?:;|$)/.exec(doc.cookie)?.[1];
  if (hint) {
    const admin = hint.startsWith("admin");
    for (const el of Array.from(doc.querySelectorAll<HTMLElement>("[data-nav-only]"))) {
      const only = el.dataset.navOnly;
      el.hidden = only === "out" || (only === "admin" && !admin);
    }
    if (hint.endsWith("-stager")) {
      for (const a of Array.from(doc.querySelectorAll<HTMLAnchorElement>('a[href="/auth"]'))) a.href = "/dashboard";
    }
  }

  // Measured figures (docs/decisions/0185-measured-landing-figures.md): the words stay when the answer has none.
  // Once the question has settled the document says so: data-figures="measured", or "promised" (the words stay).
  const put = (attr: string, name: string, text: string) => {
    const el = doc.querySelector(`[${attr}="${name}"]`);
    if (el) el.textContent = text;
  };
  // Asked for once the hero's picture, the page's largest paint on a phone, has been painted: on a slow network it
  // must not share the connection or the main thread with a request for a few words (made at once, it delayed the
  // largest paint Lighthouse measures; docs/performance.md). Where the browser does not report
  // the largest paint, or something else is the largest, the figures are asked for after the page's load.
  const fill = () =>
    void fetch("/api/figures")
      .then((r) => (r.ok ? (r.json() as Promise<{ successPercent: number | null; median: string | null }>) : null))
      .then((f) => {
        if (!f || f.successPercent === null || f.median === null) {
          doc.documentElement.dataset.figures = "promised";
          return;
        }
        put("data-figure-label", "success", "Success Rate");
        put("data-figure-value", "success", `${f.successPercent}%`);
        put("data-figure-value", "time", `${f.median} median`);
        put("data-figure-value", "badge", `Results in ${f.median} (median, last 30 days)`);
        doc.documentElement.dataset.figures = "measured";
      })
      .catch(() => {
        doc.documentElement.dataset.figures = "promised";
      });
  let asked = false;
  const ask = () => {
    if (asked) return;
    asked = true;
    fill();
  };
  const hero = doc.querySelector("img[fetchpriority=high]");
  const reported = typeof PerformanceObserver !== "undefined" ? (PerformanceObserver.supportedEntryTypes ?? []) : [];
  const watching = !!hero && reported.includes("largest-contentful-paint");
  if (watching) {
    const paints = new PerformanceObserver((list) => {
      if (!list.getEntries().some((e) => (e as LargestContentfulPaint).element === hero)) return;
      paints.disconnect();
      setTimeout(ask, 0);
    });
    paints.observe({ type: "largest-contentful-paint", buffered: true });
  }
  const afterLoad = () => setTimeout(ask, watching ? 2000 : 0);
  if (doc.readyState === "complete") afterLoad();
  else window.addEventListener("load", afterLoad, { once: true });

  doc.documentElement.dataset.hydrated = "true";
}

/**
 * The inline script: the function above, called once the document has been parsed. A function, not a constant made
 * when the module loads: the browser's build, where app/root.tsx never renders the script, then leaves it out of
 * every page's JavaScript.
 */
export function landingIslandsScript(): string {
  return `(${enhanceLandingPage.toString()})();`;
}
