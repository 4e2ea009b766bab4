/**
 * Decodes standard base64 (a provider's image answer) and throws on anything that is not base64. Native where the
 * runtime has it (workerd: `Uint8Array.fromBase64`, far faster than @oslojs/encoding's decoder written in
 * JavaScript); `atob` elsewhere (Node runs the provider contract tests).
 */
export function decodeBase64Strict(text: string): Uint8Array {
  const native = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64;
  if (native) return native.call(Uint8Array, text);
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
