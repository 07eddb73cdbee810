/**
 * A TLS client's certificate chain, read from its connection once and kept on it.
 *
 * Node offers two ways to read it, and neither is whole:
 *
 * - `getPeerCertificate(true)` (used): Node asks OpenSSL which of the presented
 *   certificates issued which, and builds the chain in that order, leaf first. It then
 *   adds the issuers it finds in the listener's own CA list, up to a root. So a chain sent
 *   out of order comes back in order, extra certificates are left out, and the trusted
 *   CAs are added: they are dropped again here (the verifier finds its anchors in the
 *   trust store itself). What OpenSSL does not count as an issuer is lost: a user
 *   certificate whose keyUsage lacks keyCertSign is not the issuer of a legacy Globus
 *   (GT2) proxy, which has no proxyCertInfo, so such a chain ends at the proxy.
 * - `getPeerX509Certificate()` gives the certificates exactly as sent, but it leaks:
 *   for each certificate after the leaf it takes a copy and removes the original from
 *   the connection's list without freeing it (Node 20 and later; so a second call sees
 *   the leaf only). Measured with a TLS server that called it once per connection
 *   (`node --expose-gc`, 1,500 connections per round presenting a proxy and its user
 *   certificate): the resident set grew by ~10 MiB every round, against flat with
 *   `getPeerCertificate(true)`. Under the soak mix (docs/performance.md) that was
 *   the service's memory climbing as long as connections were made, and any client
 *   could grow it at will by connecting.
 *
 * So the chain is read in issuer order, and only a chain that ends in a certificate
 * shaped like a GT2 proxy is read again as sent. What that read leaks is bounded by a
 * budget per listener (`LegacyChainBudget`); once it is spent, GT2 proxies are refused
 * with a reason that says so, and every other chain is read as before.
 */
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';
import type { X509Certificate } from 'node:crypto';
import type { PresentedChain } from '../auth/authenticate-chain.js';
import { hasLegacyProxyShape, MAX_CHAIN_LENGTH } from '../auth/x509-chain.js';
import { parseCertificate } from '../pki/certificate.js';

export interface PeerChain extends PresentedChain {
  /**
   * The chain ends in a legacy (GT2) proxy whose issuers were not read, because the
   * budget for reading such chains as sent is spent.
   */
  readonly legacyUnread?: true;
}

/**
 * What reading GT2 chains as sent may cost a listener over its life. Each certificate
 * read after the leaf stays allocated; ~7 KB each was measured for a 1 KB certificate
 * (its parsed form and the allocator's overhead), so each is charged 8 KiB.
 */
export class LegacyChainBudget {
  static readonly BYTES_PER_CERTIFICATE = 8 * 1024;
  /** 64 MiB: ~8,000 certificates, some thousands of GT2 connections. */
  static readonly DEFAULT_BYTES = 64 * 1024 * 1024;

  constructor(private remainingBytes: number = LegacyChainBudget.DEFAULT_BYTES) {}

  get spent(): boolean {
    return this.remainingBytes <= 0;
  }

  charge(certificates: number): void {
    this.remainingBytes -= certificates * LegacyChainBudget.BYTES_PER_CERTIFICATE;
  }
}

export interface ReadPeerChainOptions {
  /** SHA-256 fingerprints (lower-case hex) of the trust anchors, dropped from the chain's end. */
  readonly anchors?: ReadonlySet<string>;
  /** Allows the read as sent of a chain ending in a GT2 proxy; without it none is made. */
  readonly legacy?: LegacyChainBudget;
}

const CHAIN = Symbol('ceres.peerChain');
type ChainSocket = TLSSocket & { [CHAIN]?: PeerChain };

/** The client's certificates, leaf first (read once per socket and kept on it). */
export function readPeerChain(socket: TLSSocket, o: ReadPeerChainOptions = {}): PeerChain {
  const s = socket as ChainSocket;
  if (s[CHAIN] !== undefined) return s[CHAIN];
  const ordered = inIssuerOrder(socket, o.anchors);
  let chain: PeerChain = { ders: ordered.ders, fingerprints: ordered.fingerprints };
  if (endsInLegacyProxy(ordered)) {
    if (o.legacy !== undefined && !o.legacy.spent) {
      chain = asSent(socket);
      o.legacy.charge(Math.max(0, chain.ders.length - 1));
    } else chain = { ...chain, legacyUnread: true };
  }
  s[CHAIN] = chain;
  return chain;
}

/** Node's fingerprint spelling (upper-case hex pairs with colons) as the trust store's. */
function plainHex(fingerprint: string): string {
  return fingerprint.replaceAll(':', '').toLowerCase();
}

/** A chain read in issuer order, and whether its last certificate's last CN names a GT2 proxy. */
type IssuerOrderChain = PeerChain & { readonly lastCnIsProxy: boolean };

/** The last value of the subject's CN in Node's certificate object (a string, or a list when repeated). */
function lastSubjectCn(c: Partial<DetailedPeerCertificate>): string | undefined {
  const cn = (c.subject as Record<string, string | string[] | undefined> | undefined)?.CN;
  return Array.isArray(cn) ? cn[cn.length - 1] : cn;
}

function inIssuerOrder(socket: TLSSocket, anchors: ReadonlySet<string> | undefined): IssuerOrderChain {
  const certs: Array<Partial<DetailedPeerCertificate>> = [];
  const top = socket.getPeerCertificate(true) as Partial<DetailedPeerCertificate> | null;
  // One more than the verifier accepts, so an over-long chain is still refused as such.
  let c: Partial<DetailedPeerCertificate> | undefined = top ?? undefined;
  while (c?.raw !== undefined && certs.length <= MAX_CHAIN_LENGTH) {
    certs.push(c);
    // A root names itself as its issuer.
    c = c.issuerCertificate === c ? undefined : c.issuerCertificate;
  }
  while (certs.length > 1 && anchors?.has(plainHex(certs[certs.length - 1]?.fingerprint256 ?? '')) === true)
    certs.pop();
  const last = certs[certs.length - 1];
  const cn = last === undefined ? undefined : lastSubjectCn(last);
  return {
    ders: certs.map((x) => x.raw ?? Buffer.alloc(0)), // every one has raw (the loop's condition)
    fingerprints: certs.map((x) => x.fingerprint256 ?? ''),
    lastCnIsProxy: cn === 'proxy' || cn === 'limited proxy',
  };
}

function endsInLegacyProxy(chain: IssuerOrderChain): boolean {
  // Node's object has the names parsed already: the full parse only for a likely GT2 proxy.
  const last = chain.ders[chain.ders.length - 1];
  if (last === undefined || !chain.lastCnIsProxy) return false;
  try {
    return hasLegacyProxyShape(parseCertificate(last));
  } catch {
    return false; // not a certificate the verifier could read either: it refuses it
  }
}

/** The leaky read (see above): the certificates exactly as the client sent them. */
function asSent(socket: TLSSocket): PeerChain {
  const ders: Buffer[] = [];
  const fingerprints: string[] = [];
  let c: X509Certificate | undefined = socket.getPeerX509Certificate();
  while (c !== undefined && ders.length <= MAX_CHAIN_LENGTH) {
    ders.push(c.raw);
    fingerprints.push(c.fingerprint256);
    c = c.issuerCertificate;
  }
  return { ders, fingerprints };
}
