/**
 * Verification of the VOMS attribute certificate(s) of a verified proxy chain. An AC is
 * believed only when all of these hold (the rules of RFC 5755 and of the VOMS
 * validator, by which grid services accept FQANs):
 *
 *  1. it is a v2 AC with exactly one FQAN attribute whose policy authority names the VO
 *     and the VOMS server (`vo://host:port`), and every FQAN lies under `/<vo>`;
 *  2. its holder (baseCertificateID) is the end-entity certificate of the chain: same
 *     serial number, and a holder name equal to that certificate's issuer. ACs written
 *     by old VOMS versions name the certificate's subject there instead; the VOMS
 *     validator accepts that too, and so do we (the serial must match in both cases);
 *  3. `now` lies within its validity, with `skewMs` of allowance before notBefore only
 *     (an AC minted a moment ago by a server whose clock runs ahead); never after notAfter;
 *  4. it has no critical extension we do not understand; if it names targets, one of
 *     them is this service;
 *  5. its signature verifies with the key of a VOMS server certificate named as its
 *     issuer, embedded in the AC or kept in the VOMS directory;
 *  6. the VOMS directory holds `<vo>/<host>.lsc` and one of its chains names that
 *     certificate's subject, its issuer and any further lines up the path;
 *  7. that certificate is valid and chains to the trusted CAs, CRLs applied, by the
 *     same verifier as client certificates (any extended key usage accepted).
 *
 * Which ACs are read: those of the proxy nearest the leaf that carries any (as the VOMS
 * library reads them); ACs in proxies further down are not read, and each such proxy is
 * named in the reasons. Every AC of that proxy is checked on its own (one per VO, as
 * `voms-proxy-init -voms a -voms b` makes them): the FQANs of all that pass are given,
 * in the proxy's order, and the VO of the first that passes is the caller's (primary) VO,
 * as A-REX matches a rule against any of the ACs. Each AC that fails is a reason, given
 * back even when another passed, so that nothing is dropped without a log line.
 */
import type { ParsedCertificate } from '../../pki/certificate.js';
import { sameName, toOneline, type Rdn } from '../../pki/dn.js';
import type { TrustStore } from '../../pki/trust-store.js';
import type { VomsAttributes } from '../identity.js';
import { verifyClientChain } from '../x509-chain.js';
import { acSignedBy, supportedAcAlgorithm } from './ac-signature.js';
import {
  OID_AC_TARGETS,
  OID_AKI,
  OID_NO_REV_AVAIL,
  OID_VOMS_AC_CERTS,
  OID_VOMS_AC_SEQ,
  OID_VOMS_AC_TAGS,
  decodeVomsExtension,
  type AttributeCertificate,
} from './attribute-certificate.js';
import { lscAccepts } from './lsc.js';
import type { VomsDir } from './voms-dir.js';

/** Allowance before an AC's notBefore (no clock-skew setting exists in the configuration). */
export const AC_CLOCK_SKEW_MS = 5 * 60 * 1000;

const UNDERSTOOD_CRITICAL: ReadonlySet<string> = new Set([
  OID_AC_TARGETS,
  OID_NO_REV_AVAIL,
  OID_AKI,
  OID_VOMS_AC_CERTS,
  OID_VOMS_AC_TAGS,
]);
/** VO names and server host names become file names in the VOMS directory. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const POLICY_AUTHORITY = /^([^:/]+):\/\/([^:/]+)(?::\d+)?$/;
/** Longest issuer path looked at for the LSC comparison. */
const MAX_PATH = 8;
/** ACs looked at per proxy (one per VO; real proxies carry one or two): each costs signature checks. */
const MAX_ACS = 8;

export interface VomsContext {
  readonly trust: TrustStore;
  readonly dir: VomsDir;
  readonly skewMs?: number;
  /** Names of this service, for ACs that name their targets. */
  readonly hostnames?: readonly string[];
}

export type VomsOutcome =
  /**
   * `ignored`: why ACs of the chain were not used although these attributes were; `soon`: one
   * of them may become acceptable by itself shortly (not yet valid): do not remember the outcome.
   */
  | {
      readonly ok: true;
      readonly attributes: VomsAttributes;
      readonly ignored: readonly string[];
      readonly soon: boolean;
    }
  | { readonly ok: false; readonly reason: string; readonly soon: boolean };

class AcRefusal extends Error {
  constructor(
    reason: string,
    readonly soon = false,
  ) {
    super(reason);
  }
}
const refuse = (reason: string, soon = false): never => {
  throw new AcRefusal(reason, soon);
};

/**
 * The verified attributes of a chain already verified as a client chain (`chain`
 * parsed, leaf first; the end-entity certificate at `proxyDepth`), or undefined when
 * no proxy of it carries VOMS attributes.
 */
export function verifyVomsAttributes(
  chain: readonly ParsedCertificate[],
  proxyDepth: number,
  ctx: VomsContext,
  now: number,
): VomsOutcome | undefined {
  const eec = chain[proxyDepth];
  if (eec === undefined) return undefined;
  // Leaf first: the most recent proxy that carries attributes is what the user asked for last.
  const proxies = chain.slice(0, proxyDepth);
  const at = proxies.findIndex((c) => c.extensions.has(OID_VOMS_AC_SEQ));
  const ext = proxies[at]?.extensions.get(OID_VOMS_AC_SEQ);
  if (ext === undefined) return undefined;
  const reasons: string[] = [];
  for (let i = at + 1; i < proxies.length; i++) {
    if (proxies[i]?.extensions.has(OID_VOMS_AC_SEQ))
      reasons.push(
        `the attribute certificates of proxy certificate ${i} are not read: the proxy above it carries its own`,
      );
  }
  let acs: AttributeCertificate[];
  try {
    acs = decodeVomsExtension(ext.value);
  } catch (e) {
    reasons.unshift(`the VOMS extension cannot be decoded (${e instanceof Error ? e.message : 'error'})`);
    return { ok: false, reason: reasons.join('; '), soon: false };
  }
  if (acs.length > MAX_ACS) reasons.push(`only the first ${MAX_ACS} of ${acs.length} attribute certificates are read`);
  const passed: VomsAttributes[] = [];
  let soon = false;
  for (const ac of acs.slice(0, MAX_ACS)) {
    try {
      passed.push(verifyAc(ac, eec, ctx, now));
    } catch (e) {
      if (!(e instanceof AcRefusal)) throw e;
      reasons.push(e.message);
      soon ||= e.soon;
    }
  }
  const [primary] = passed;
  if (primary === undefined) return { ok: false, reason: reasons.join('; '), soon };
  const attributes: VomsAttributes = {
    ...primary,
    // FQANs name their VO in their first group, so those of several VOs stay apart; a repeated one is given once.
    fqans: [...new Set(passed.flatMap((a) => a.fqans))],
    // The attributes are given together, so they end with the first AC to end.
    notAfter: new Date(Math.min(...passed.map((a) => a.notAfter.getTime()))),
  };
  return { ok: true, attributes, ignored: reasons, soon };
}

function verifyAc(ac: AttributeCertificate, eec: ParsedCertificate, ctx: VomsContext, now: number): VomsAttributes {
  // 1. Form, VO and FQANs.
  if (ac.version !== 1) refuse(`the attribute certificate has version ${ac.version + 1}, not 2`);
  if (ac.fqanAttributes !== 1 || ac.fqans === undefined)
    refuse(`the attribute certificate carries ${ac.fqanAttributes} FQAN attributes, not one`);
  const m = POLICY_AUTHORITY.exec(ac.policyAuthority ?? '');
  const vo = m?.[1] ?? '';
  const host = m?.[2] ?? '';
  if (!SAFE_NAME.test(vo) || !SAFE_NAME.test(host) || vo.includes('..') || host.includes('..'))
    refuse(
      `the attribute certificate's policy authority '${ac.policyAuthority ?? ''}' does not name a VO and a VOMS server`,
    );
  const fqans = ac.fqans as readonly string[];
  if (fqans.length === 0) refuse(`the attribute certificate of VO ${vo} carries no FQAN`);
  const outside = fqans.find((f) => f !== `/${vo}` && !f.startsWith(`/${vo}/`));
  if (outside !== undefined)
    refuse(`the FQAN ${outside} is not under the VO /${vo} the attribute certificate was issued for`);
  // FQANs are recorded with the caller's jobs and written into listings, logs and the
  // one-line fields of accounting records: a line break would start fields of its own.
  if (fqans.some((f) => /[\p{Cc}\u2028\u2029]/u.test(f)))
    refuse(`an FQAN of the attribute certificate of VO ${vo} holds a control character`);
  const what = `the attribute certificate of VO ${vo} from ${host}`;

  // 2. Holder: the end-entity certificate of the presented chain.
  const h = ac.holder;
  if (h === undefined) refuse(`${what} does not name its holder by issuer and serial number`);
  const holder = h as NonNullable<typeof h>;
  if (
    stripZeros(holder.serialHex) !== stripZeros(eec.serialHex) ||
    !holder.issuers.some((n) => sameName(n, eec.issuer) || sameName(n, eec.subject))
  ) {
    const named = holder.issuers[0] === undefined ? '?' : toOneline(holder.issuers[0]);
    refuse(
      `${what} was issued to another certificate (serial ${holder.serialHex} of ${named}), not to ${eec.subjectOneline}`,
    );
  }

  // 3. Time.
  const skew = ctx.skewMs ?? AC_CLOCK_SKEW_MS;
  if (now < ac.notBefore.getTime() - skew) refuse(`${what} is not valid before ${ac.notBefore.toISOString()}`, true);
  if (now > ac.notAfter.getTime()) refuse(`${what} expired at ${ac.notAfter.toISOString()}`);

  // 4. Extensions and targets.
  for (const [oid, e] of ac.extensions)
    if (e.critical && !UNDERSTOOD_CRITICAL.has(oid)) refuse(`${what} has an unsupported critical extension ${oid}`);
  if (
    ac.targets !== undefined &&
    !ac.targets.some((t) => (ctx.hostnames ?? []).some((n) => targetHost(t) === n.toLowerCase()))
  ) {
    refuse(`${what} is meant for other services only (${ac.targets.join(', ')})`);
  }

  // 5. Signature by a VOMS server certificate named as the issuer.
  if (ac.signatureAlgorithm !== ac.innerSignatureAlgorithm) refuse(`${what} names two different signature algorithms`);
  if (!supportedAcAlgorithm(ac.signatureAlgorithm))
    refuse(`${what} is signed with an unsupported algorithm ${ac.signatureAlgorithm}`);
  const issuerName = ac.issuers[0] === undefined ? '?' : toOneline(ac.issuers[0]);
  const named = (c: ParsedCertificate): boolean => ac.issuers.some((n) => sameName(n, c.subject));
  const candidates = [...ac.embeddedCerts.filter(named), ...ctx.dir.certificates.filter(named)];
  if (candidates.length === 0)
    refuse(`the certificate of the VOMS server ${issuerName} is neither in ${what} nor in the VOMS directory`);
  const signer = candidates.find((c) => acSignedBy(ac, c));
  if (signer === undefined) refuse(`the signature of ${what} does not verify with the key of ${issuerName}`);
  const server = signer as ParsedCertificate;

  // 6. The LSC file of the VO names this server.
  const chains = ctx.dir.lsc(vo, host);
  if (chains === undefined)
    refuse(`no ${vo}/${host}.lsc in the VOMS directory: the server is not trusted for VO ${vo}`);
  if (!lscAccepts(chains as NonNullable<typeof chains>, issuerPath(server, ac.embeddedCerts, ctx.trust))) {
    refuse(
      `the VOMS server ${server.subjectOneline} (issued by ${toOneline(server.issuer)}) is not the one ${vo}/${host}.lsc names`,
    );
  }

  // 7. The server certificate chains to the trusted CAs.
  const presented = ac.embeddedCerts.includes(server)
    ? [server, ...ac.embeddedCerts.filter((c) => c !== server)]
    : [server];
  const r = verifyClientChain(
    presented.map((c) => c.der),
    ctx.trust,
    new Date(now),
    { anyPurpose: true },
  );
  if (!r.ok) refuse(`the VOMS server certificate ${server.subjectOneline} is not trusted: ${r.reason}`);

  return { vo, fqans: [...fqans], serverDn: server.subjectOneline, notAfter: ac.notAfter };
}

/** Names up the path from the server certificate: its subject, its issuer, that issuer's issuer, ... */
function issuerPath(
  server: ParsedCertificate,
  embedded: readonly ParsedCertificate[],
  trust: TrustStore,
): (readonly Rdn[])[] {
  const path: (readonly Rdn[])[] = [server.subject, server.issuer];
  let c = server;
  while (path.length < MAX_PATH && !sameName(c.subject, c.issuer)) {
    const up = embedded.find((e) => e !== c && sameName(e.subject, c.issuer)) ?? trust.candidates(c.issuer)[0];
    if (up === undefined || sameName(up.subject, up.issuer)) break;
    path.push(up.issuer);
    c = up;
  }
  return path;
}

function stripZeros(hex: string): string {
  return hex.replace(/^(00)+(?=..)/, '').toLowerCase();
}

/** The host of a target name: a bare host name or a URI's authority. */
function targetHost(t: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/:]+)/i.exec(t);
  return (m?.[1] ?? t).toLowerCase();
}
