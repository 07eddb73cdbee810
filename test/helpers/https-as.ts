/**
 * One HTTPS GET presenting a client certificate, optionally on a keep-alive agent (so a
 * test can ask again on the connection it opened before), reporting the status, the
 * body, the host certificate the server presented and the socket it came on.
 */
import https from 'node:https';
import type { TLSSocket } from 'node:tls';

export interface AsCredential {
  readonly pem: string;
  readonly keyPem: string;
}

export interface Answer {
  readonly status: number;
  readonly text: string;
  /** SHA-256 fingerprint of the host certificate on this connection (colon-separated, upper case). */
  readonly hostFingerprint: string;
  readonly socket: TLSSocket;
}

export function getAs(
  url: string,
  who: AsCredential,
  caPem: string,
  agent: https.Agent | false = false,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: 'GET', cert: who.pem, key: who.keyPem, ca: caPem, agent, headers: { accept: 'application/json' } },
      (res) => {
        const socket = res.socket as TLSSocket;
        const hostFingerprint = socket.getPeerCertificate().fingerprint256;
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(parts).toString('utf8'),
            hostFingerprint,
            socket,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
