import { useEffect, useRef } from "react";

/**
 * Reveals a block once, when `threshold` of it is in view. The block is visible
 * until this runs (server render, no JavaScript), stays visible for people who
 * prefer reduced motion, and is never hidden when it is already on screen.
 * Styles: [data-reveal] in app/app.css.
 */
export function useRevealOnce<T extends HTMLElement>(threshold = 0.1) {
  const ref = useRef<T>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver === "undefined") return;
    if (window.matchMedia("(prefers-reduced-motion: reduce)").matches) return;
    if (el.getBoundingClientRect().top < window.innerHeight) return;
    el.dataset.reveal = "hidden";
    const io = new IntersectionObserver(
      (entries) => {
        if (!entries.some((e) => e.isIntersecting)) return;
        el.dataset.reveal = "shown";
        io.disconnect();
      },
      { threshold },
    );
    io.observe(el);
    return () => {
      io.disconnect();
      el.dataset.reveal = "shown";
    };
  }, [threshold]);
  return ref;
}
