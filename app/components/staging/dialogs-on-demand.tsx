import { type ComponentProps, lazy, Suspense } from "react";
import type { DesignerDialog } from "./designer-dialog";
import type { QuickDialog } from "./quick-dialog";

// The staging dialogs of /dashboard (the AI Designer; a photo's editor with its
// variations, advanced options, versions, re-rolls and compare slider) are
// fetched the first time one opens, not with the page: the library's first
// load carries none of their code (docs/decisions/0144-dashboard-reads-with-the-session.md).
// React.lazy fetches only when the component first renders, and the dashboard
// renders a dialog only while it is open. Both dialogs share one chunk.

const loadDialogs = () => import("./dialogs");

const LazyDesigner = lazy(() => loadDialogs().then((m) => ({ default: m.DesignerDialog })));
const LazyQuick = lazy(() => loadDialogs().then((m) => ({ default: m.QuickDialog })));

export function DesignerDialogOnDemand(props: ComponentProps<typeof DesignerDialog>) {
  return (
    <Suspense fallback={null}>
      <LazyDesigner {...props} />
    </Suspense>
  );
}

export function QuickDialogOnDemand(props: ComponentProps<typeof QuickDialog>) {
  return (
    <Suspense fallback={null}>
      <LazyQuick {...props} />
    </Suspense>
  );
}
