// The compiled stylesheet as text, for inlining (server bundle only).
import css from "~/app.css?inline";

export const APP_CSS: string = css;
