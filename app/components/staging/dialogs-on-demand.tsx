import { type ComponentProps, lazy, Suspense } from "react";
import type { DesignerDialog } from "./designer-dialog";
import type { QuickDialog } from "./quick-dialog";
import type { SkyDialog } from "./sky-dialog";

// The staging dialogs of /dashboard (the AI Designer; a photo's editor with its
// variations, advanced options, versions, re-rolls and compare slider) are
// fetched the first time one opens, not with the page: the library's first
// load carries none of their code (docs/decisions/0144-dashboard-reads-with-the-session.md).
// React.lazy fetches only when the component first renders, and the dashboard
// renders a dialog only while it is open. Both dialogs share one chunk.

const loadDialogs = () => import("./dialogs");

const LazyDesigner = lazy(() => loadDialogs().then((m) => ({ default: m.DesignerDialog })));
const LazySky = lazy(() => loadDialogs().then((m) => ({ default: m.SkyDialog })));
const LazyQuick = lazy(() => loadDialogs().then((m) => ({ default: m.QuickDialog })));

/** Shown while the dialogs' chunk arrives (a moment on a slow phone): the tap is seen to have done something. */
function Opening() {
  return (
    <div className="fixed inset-0 z-50 flex items-center justify-center bg-slate-900/30" role="status">
      <span className="rounded-lg bg-white px-4 py-2 text-sm font-medium shadow-lg">Opening…</span>
    </div>
  );
}

export function DesignerDialogOnDemand(props: ComponentProps<typeof DesignerDialog>) {
  return (
    <Suspense fallback={<Opening />}>
      <LazyDesigner {...props} />
    </Suspense>
  );
}

export function QuickDialogOnDemand(props: ComponentProps<typeof QuickDialog>) {
  return (
    <Suspense fallback={<Opening />}>
      <LazyQuick {...props} />
    </Suspense>
  );
}

export function SkyDialogOnDemand(props: ComponentProps<typeof SkyDialog>) {
  return (
    <Suspense fallback={<Opening />}>
      <LazySky {...props} />
    </Suspense>
  );
}
