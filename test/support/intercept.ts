/**
 * `target` (a binding such as D1 or R2, or one of its objects) with its member `name` replaced; every other member is
 * the target's own, bound to it. For tests that make a write land, or fail, at one chosen moment.
 */
export function intercept<T extends object, K extends keyof T>(target: T, name: K, replacement: T[K]): T {
  return new Proxy(target, {
    get(t, prop) {
      if (prop === name) return replacement;
      const value = Reflect.get(t, prop, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}
