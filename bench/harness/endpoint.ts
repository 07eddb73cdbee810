/**
 * First contact with an endpoint: TLS (and the server's key type, which the raw
 * transfer baseline copies), `GET {service}/rest` for the version, and one cheap
 * authorised call so a certificate the service does not map fails here, once, with a
 * clear message instead of in every scenario.
 */
import { connect, type TLSSocket } from 'node:tls';
import type { ArcClient, Credentials } from './client.js';
import { BenchError, classifyTransportError, refusalFor } from './failures.js';
import { chooseVersion, parseVersionList } from './versions.js';

export type KeySpec =
  { type: 'rsa'; bits: number } | { type: 'ec'; curve: string } | { type: 'ed25519' } | { type: 'ed448' };

export function keySpecText(k: KeySpec): string {
  if (k.type === 'rsa') return `RSA-${k.bits}`;
  if (k.type === 'ec') return `EC ${k.curve}`;
  return k.type === 'ed25519' ? 'Ed25519' : 'Ed448';
}

export interface ProbeResult {
  readonly version: string;
  readonly offered: string[];
  readonly serverKey: KeySpec;
}

/** The server certificate's public key type, from one TLS handshake. */
export function serverKeySpec(serviceUrl: string, creds: Credentials, timeoutMs = 15_000): Promise<KeySpec> {
  const u = new URL(serviceUrl);
  return new Promise((resolve, reject) => {
    let settled = false;
    let sock: TLSSocket | undefined;
    const done = (e: unknown, k?: KeySpec): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      sock?.destroy();
      if (k !== undefined) resolve(k);
      else reject(classifyTransportError(e, u.origin));
    };
    const timer = setTimeout(
      () => done(Object.assign(new Error('TLS handshake timed out'), { code: 'UND_ERR_CONNECT_TIMEOUT' })),
      timeoutMs,
    );
    try {
      // Throws at once for unusable credentials (bad PEM, key not matching the cert).
      sock = connect({
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: Number(u.port || 443),
        cert: creds.cert,
        key: creds.key,
        ca: creds.ca,
        rejectUnauthorized: true,
        ...(/^[\d.]+$|:/.test(u.hostname) ? {} : { servername: u.hostname }),
      });
    } catch (e) {
      done(e);
      return;
    }
    const s = sock;
    s.once('secureConnect', () => {
      const x = s.getPeerX509Certificate();
      const pk = x?.publicKey;
      const d = pk?.asymmetricKeyDetails;
      const t = pk?.asymmetricKeyType;
      if (t === 'rsa' || t === 'rsa-pss') done(undefined, { type: 'rsa', bits: d?.modulusLength ?? 2048 });
      else if (t === 'ec') done(undefined, { type: 'ec', curve: d?.namedCurve ?? 'prime256v1' });
      else if (t === 'ed25519' || t === 'ed448') done(undefined, { type: t });
      else
        done(
          new BenchError(
            'not-arc',
            `${u.origin} presents a certificate with an unsupported key type (${t ?? 'unknown'})`,
          ),
        );
    });
    s.once('error', (e) => done(e));
  });
}

/**
 * Checks the endpoint and sets `client.version`. Throws BenchErrors of kind
 * unreachable / tls-trust / credentials / not-arc with a one-line message.
 */
export async function probeEndpoint(client: ArcClient, creds: Credentials): Promise<ProbeResult> {
  try {
    return await probe(client, creds);
  } catch (e) {
    // A server that refuses a client certificate without a TLS alert just hangs up.
    if (e instanceof BenchError && e.kind === 'closed')
      throw new BenchError(
        'credentials',
        `${e.message}: at first contact this usually means it refused the client certificate`,
      );
    throw e;
  }
}

async function probe(client: ArcClient, creds: Credentials): Promise<ProbeResult> {
  const serverKey = await serverKeySpec(client.serviceUrl, creds);
  const where = client.serviceUrl;
  const a = await client.request('GET', `${client.servicePath}/rest`);
  const refusal = refusalFor(a.status, where);
  if (refusal) throw refusal;
  if (a.status !== 200) {
    throw new BenchError(
      'not-arc',
      `${where} is not an ARC REST service: GET ${client.servicePath}/rest answered HTTP ${a.status}${a.reason ? ` ${a.reason}` : ''} (is the service path right?)`,
    );
  }
  const ct = a.headers['content-type'];
  const offered = parseVersionList(a.body.toString('utf8'), Array.isArray(ct) ? ct[0] : ct);
  client.version = chooseVersion(offered);
  // Authorisation check: an empty status call touches no job but needs a mapped user.
  const s = await client.request('POST', `${client.restBase}/jobs?action=status`, {
    body: '{"job":[]}',
    contentType: 'application/json',
  });
  const r2 = refusalFor(s.status, where);
  if (r2) throw r2;
  if (s.status !== 200 && s.status !== 201) {
    throw new BenchError(
      'not-arc',
      `${where}: POST ${client.restBase}/jobs?action=status answered HTTP ${s.status}${s.reason ? ` ${s.reason}` : ''}; not an ARC REST jobs interface`,
    );
  }
  return { version: client.version, offered, serverKey };
}
