/**
 * Raw HTTP/1.1 over TLS with a dev PKI credential, for tests that must control the
 * bytes on the wire: send a request head and part of a body, then vanish (FIN or RST),
 * or read part of a response and vanish.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';

export interface Credential {
  readonly pem: string;
  readonly ca: string;
}

export function credential(pkiDir: string, file = 'userproxy.pem'): Credential {
  return { pem: readFileSync(join(pkiDir, file), 'utf8'), ca: readFileSync(join(pkiDir, 'ca.pem'), 'utf8') };
}

export function tlsConnect(port: number, c: Credential): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, servername: 'localhost', cert: c.pem, key: c.pem, ca: c.ca }, () => {
      // From here on the peer may cut the connection at any time: callers look at 'close'.
      s.off('error', reject);
      s.on('error', () => undefined);
      resolve(s);
    });
    s.once('error', reject);
  });
}

/** A request head (request line and headers, CRLF-separated) with the final blank line. */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  return `${method} ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}

/** Writes `data`, waiting for the socket to drain; false once the socket is gone. */
export async function send(s: TLSSocket, data: string | Buffer): Promise<boolean> {
  if (s.destroyed) return false;
  if (s.write(data)) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => () => {
      s.off('drain', onDrain);
      s.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    s.once('drain', onDrain);
    s.once('close', onClose);
  });
}

/** Ends the connection abruptly: RST when `reset`, otherwise FIN then close. */
export function vanish(s: TLSSocket, reset: boolean): void {
  s.on('error', () => undefined);
  if (reset && typeof s.resetAndDestroy === 'function') {
    try {
      s.resetAndDestroy();
      return;
    } catch {
      // not a TCP socket underneath: fall back to a plain close
    }
  }
  s.destroy();
}

/** Resolves with what was received by the time the peer closes (never rejects). */
export function readAll(s: TLSSocket): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    s.on('data', (c: Buffer) => parts.push(c));
    s.on('error', () => undefined);
    s.once('close', () => resolve(Buffer.concat(parts)));
  });
}
