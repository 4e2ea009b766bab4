/** The id of the <style> element every document inlines the app stylesheet in (inline-css.tsx); the build finds
 * a prerendered page's stylesheet by it (scripts/prerendered-pages.ts). A module of its own, without JSX, so Node
 * scripts can import it. */
export const INLINE_CSS_ID = "app-css";
