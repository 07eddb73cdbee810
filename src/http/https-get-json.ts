/**
 * A small bounded HTTPS GET of a JSON document (token issuers' discovery documents and
 * key sets): https only,
 * verified against the given CAs, size and time bounded, no redirects followed (a
 * discovery document names the key set's URL itself).
 */
import { request } from 'node:https';

export interface HttpsGetOptions {
  /** Trusted CAs (PEM). */
  readonly ca: readonly string[];
  readonly timeoutMs?: number;
  readonly maxBytes?: number;
}

export function httpsGetJson(url: string, o: HttpsGetOptions): Promise<unknown> {
  const u = new URL(url);
  if (u.protocol !== 'https:') return Promise.reject(new Error(`not an https URL: ${u.origin}`));
  const maxBytes = o.maxBytes ?? 1024 * 1024;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      { method: 'GET', ca: [...o.ca], headers: { accept: 'application/json' }, timeout: o.timeoutMs ?? 10_000 },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`${u.origin}${u.pathname} answered ${res.statusCode ?? '?'}`));
          return;
        }
        const parts: Buffer[] = [];
        let n = 0;
        res.on('data', (d: Buffer) => {
          n += d.length;
          if (n > maxBytes) {
            req.destroy(new Error(`${u.origin}${u.pathname}: document larger than ${maxBytes} bytes`));
            return;
          }
          parts.push(d);
        });
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(parts).toString('utf8')));
          } catch {
            reject(new Error(`${u.origin}${u.pathname}: not JSON`));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${u.origin}${u.pathname}: timed out`)));
    req.on('error', reject);
    req.end();
  });
}
