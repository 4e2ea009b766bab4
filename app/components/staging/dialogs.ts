// The one chunk dialogs-on-demand.tsx fetches: both staging dialogs of /dashboard.
export { DesignerDialog } from "./designer-dialog";
export { QuickDialog } from "./quick-dialog";
export { SkyDialog } from "./sky-dialog";
