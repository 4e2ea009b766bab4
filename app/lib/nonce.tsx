import { createContext, useContext } from "react";

// The CSP nonce of the current response, provided by entry.server.tsx. In the
// browser it is empty: scripts are already running by then.
const NonceContext = createContext<string>("");
export const NonceProvider = NonceContext.Provider;
export function useNonce(): string {
  return useContext(NonceContext);
}
