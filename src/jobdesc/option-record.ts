/**
 * URL option records built from client-supplied names. Plain assignment would treat a
 * name such as `__proto__` specially (and silently drop it); defining the property keeps
 * every name an ordinary own key, so the record stays plain data that JSON round-trips.
 */
export function putOption(rec: Record<string, string> | undefined, key: string, value: string): Record<string, string> {
  const out = rec ?? {};
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  return out;
}
