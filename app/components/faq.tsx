import type { ReactNode } from "react";
import { Icon } from "./icons";

export interface FaqItem {
  q: string;
  a: ReactNode;
}

/**
 * An accordion with one item open at a time. <details name> makes the items
 * exclusive in the browser itself (no JavaScript needed); the toggle handler
 * does the same for browsers that do not know the attribute yet.
 */
export function Faq({ items, name }: { items: FaqItem[]; name: string }) {
  return (
    <div className="divide-y divide-line rounded-2xl border border-line bg-white" data-testid="faq">
      {items.map((item, i) => (
        <details
          key={item.q}
          name={name}
          open={i === 0}
          className="group px-5 sm:px-6"
          onToggle={(e) => {
            const el = e.currentTarget;
            if (!el.open) return;
            for (const other of el.parentElement?.querySelectorAll<HTMLDetailsElement>("details") ?? []) {
              if (other !== el && other.open) other.open = false;
            }
          }}
        >
          <summary className="flex min-h-14 cursor-pointer list-none items-center justify-between gap-4 py-4 text-left font-semibold [&::-webkit-details-marker]:hidden">
            {item.q}
            <Icon name="chevron" className="h-5 w-5 shrink-0 text-muted transition-transform group-open:rotate-180" />
          </summary>
          <div className="pb-5 text-muted">{item.a}</div>
        </details>
      ))}
    </div>
  );
}
