/**
 * Where a JWT delegation's token arrives: `X-Delegation: bearer <JWT>` (the spec), or
 * `X-Token-Delegation` (A-REX 7's name: pyarcrest sends `Bearer <JWT>` in it, the
 * ARC 7 client the bare token). The scheme word is optional and case-insensitive.
 * The value is a secret: the logger redacts both headers, and nothing here echoes it.
 */
import type { IncomingMessage } from 'node:http';

const HEADERS = ['x-delegation', 'x-token-delegation'] as const;

export function delegatedToken(req: IncomingMessage): string | undefined {
  for (const h of HEADERS) {
    const v = req.headers[h];
    const s = Array.isArray(v) ? v.join(',') : v;
    if (s === undefined) continue;
    const token = s
      .trim()
      .replace(/^bearer(\s+|$)/i, '')
      .trim();
    if (token !== '') return token;
  }
  return undefined;
}
