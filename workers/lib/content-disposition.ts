// A Content-Disposition header that carries any file name safely: an ASCII
// fallback for old clients and the exact name in RFC 5987 form.

function clean(name: string): string {
  return name
    .replace(/\s+/g, " ")
    .replace(/[\p{Cc}"\\/]/gu, "")
    .trim();
}

export function contentDisposition(kind: "attachment" | "inline", fileName: string): string {
  const name = clean(fileName) || "photo";
  const ascii = name.replace(/[^\x20-\x7e]/g, "_").replace(/[;%]/g, "_");
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
