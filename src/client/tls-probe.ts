/**
 * The TLS handshake alone, as a client makes it (the CA directory's certificates as
 * anchors, the caller's proxy if any), looked at before any request: whether the
 * server's certificate chains to a trusted CA, whether it names the host of the URL,
 * and what it says. Trust is judged here rather than left to the HTTP client so that a
 * refusal can say which certificate and which CA directory, and the name check can be
 * told apart from the chain check.
 */
import { checkServerIdentity, connect, type PeerCertificate } from 'node:tls';
import { isIP } from 'node:net';

export interface TlsProbe {
  /** The chain verifies against the anchors. */
  readonly trusted: boolean;
  /** OpenSSL's reason when it does not (e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE). */
  readonly trustError: string | undefined;
  /** Why the certificate does not name the host; undefined when it does. */
  readonly nameError: string | undefined;
  readonly subject: string;
  readonly issuer: string;
  readonly validTo: Date;
  readonly protocol: string;
}

export interface TlsProbeOptions {
  readonly host: string;
  readonly port: number;
  readonly caPems: readonly string[];
  readonly proxyPem?: string | undefined;
  readonly signal: AbortSignal;
}

export function probeTls(o: TlsProbeOptions): Promise<TlsProbe> {
  return new Promise<TlsProbe>((resolve, reject) => {
    const socket = connect({
      host: o.host,
      port: o.port,
      ...(isIP(o.host) === 0 ? { servername: o.host } : {}),
      ca: [...o.caPems],
      ...(o.proxyPem === undefined ? {} : { cert: o.proxyPem, key: o.proxyPem }),
      // Judged below, so that the refusal can name the certificate.
      rejectUnauthorized: false,
    });
    const onAbort = (): void => {
      socket.destroy();
      reject(o.signal.reason instanceof Error ? o.signal.reason : new Error('aborted'));
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    const finish = (): void => o.signal.removeEventListener('abort', onAbort);
    socket.once('secureConnect', () => {
      finish();
      const cert = socket.getPeerCertificate(false);
      const nameError = checkServerIdentity(o.host, cert)?.message;
      resolve({
        trusted: socket.authorized,
        trustError: socket.authorizationError === null ? undefined : String(socket.authorizationError),
        nameError,
        subject: dnOf(cert.subject),
        issuer: dnOf(cert.issuer),
        validTo: new Date(cert.valid_to),
        protocol: socket.getProtocol() ?? '?',
      });
      socket.end();
    });
    socket.once('error', (e) => {
      finish();
      reject(e);
    });
  });
}

/** The one-line (OpenSSL "compat") form of a name, as grid tools print it. */
function dnOf(name: PeerCertificate['subject'] | undefined): string {
  if (name === undefined) return '?';
  const parts: string[] = [];
  for (const [k, v] of Object.entries(name)) {
    for (const x of Array.isArray(v) ? v : [v]) parts.push(`/${k}=${String(x)}`);
  }
  return parts.join('');
}
