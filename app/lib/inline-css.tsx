import { createContext, useContext } from "react";
import { INLINE_CSS_ID } from "./inline-css-id";

// The whole stylesheet is small (about 5 KB gzipped), so it is inlined in the
// document: the first paint on a slow phone then waits for one round trip, not
// two (docs/performance.md). entry.server.tsx provides the text; in the browser
// the same text is read back from the document before hydration, so both
// sides render the identical <style>.

function fromDocument(): string {
  if (typeof document === "undefined") return "";
  return document.getElementById(INLINE_CSS_ID)?.textContent ?? "";
}

const InlineCssContext = createContext<string | null>(null);
export const InlineCssProvider = InlineCssContext.Provider;

export function InlineStyles() {
  const css = useContext(InlineCssContext) ?? fromDocument();
  // Our own build's CSS, never user input.
  return <style id={INLINE_CSS_ID} dangerouslySetInnerHTML={{ __html: css }} />;
}
