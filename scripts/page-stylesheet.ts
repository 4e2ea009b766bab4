import { type Selector, type SelectorComponent, transform } from "lightningcss";

// The stylesheet a prerendered page inlines, cut to the rules that can match it (ADR 0150).
//
// Every document inlines the whole app stylesheet (app/lib/inline-css.tsx), about 47 KB of text; `/` can use about
// 28 KB of it. A prerendered page ships no JavaScript, so its markup is final at build time: no class is ever added to
// it in the browser. A rule whose every selector names a class absent from the page can never match it, and is left
// out. Only that is decided here, by subtraction from the built stylesheet: nothing is reordered or rewritten, rules
// without classes (elements, attributes, :root, @font-face, @keyframes, @property) are kept. `:is()` and `:where()`
// need one of their arguments to match, so they are looked into; a class inside any other pseudo-class's argument
// (`:not(.x)`, `:has(.x)`) never removes a rule, since absence can match there. Extra class names (text that looks
// like a class attribute anywhere in the document) can only keep more rules, never fewer.

/** The class names used in an HTML document (every `class` attribute's tokens). */
export function classesIn(html: string): Set<string> {
  const names = new Set<string>();
  for (const m of html.matchAll(/\sclass\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)) {
    for (const token of decodeEntities(m[1] ?? m[2] ?? "").split(/\s+/)) if (token) names.add(token);
  }
  return names;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(Number.parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

/**
 * Whether a selector can match in a document whose classes are `present`: false only when one of its compound
 * selectors requires a class the document lacks. `:is()` and `:where()` require one of their arguments, so they are
 * looked into; every other pseudo-class's argument (`:not(.x)` matches where `.x` is absent) is not.
 */
export function selectorCanMatch(selector: Selector, present: ReadonlySet<string>): boolean {
  return selector.every((part: SelectorComponent) => {
    if (part.type === "class") return present.has(part.name);
    if (part.type === "pseudo-class" && (part.kind === "is" || part.kind === "where")) {
      return part.selectors.some((inner) => selectorCanMatch(inner, present));
    }
    return true;
  });
}

export interface PageStylesheet {
  css: string;
  /** Style rules left out, counted at every depth. */
  removed: number;
}

/** `css` without the style rules that cannot match `html`. */
export function pageStylesheet(css: string, html: string): PageStylesheet {
  const present = classesIn(html);
  let removed = 0;
  const { code } = transform({
    filename: "app.css",
    code: new TextEncoder().encode(css),
    minify: true,
    visitor: {
      Rule: {
        style(rule) {
          if (rule.value.selectors.some((s) => selectorCanMatch(s, present))) {
            // Handed back untouched (returning nothing): a rule is kept whole, even where some of its selectors
            // cannot match, so lightningcss never re-reads a rule we rebuilt.
            return;
          }
          removed++;
          return [];
        },
      },
    },
  });
  // A second pass drops the at-rules (@media, @supports) the first left empty.
  const tidied = transform({ filename: "app.css", code, minify: true }).code;
  return { css: new TextDecoder().decode(tidied), removed };
}
