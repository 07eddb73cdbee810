/**
 * The CRLs of a CA directory (`<hash>.r0`, `.r1`, ...), kept current while the service
 * runs: fetch-crl rewrites them every few hours, in place or by rename. The directory is
 * looked at again at most every `recheckMs`, from the verification path itself (and by the
 * service's timer that follows the CA directory, src/service/trust-watch.ts): one readdir
 * and one stat per CRL file; only files whose inode, size or times changed are read again
 * (./followed-files.ts). Each change bumps `generation`, which the verified-chain
 * cache follows (src/auth/chain-cache.ts), so no chain verified before a reload is
 * trusted after it.
 *
 * Rules (as OpenSSL applies them with CRL checking on, A-REX's default):
 *  - a CRL applies to a certificate when its issuer name is the certificate's issuer and
 *    its signature verifies with the issuing certificate's key (a CRL of an older CA key
 *    under the same name does not apply); of several, the most recent (thisUpdate) counts;
 *  - a listed serial number is refused; a CRL past its nextUpdate is refused for every
 *    certificate it would cover (stale revocation data is no revocation data);
 *  - a CA without any CRL in the directory is not checked.
 * A file that cannot be used is reported; if it was usable before (a rewrite caught half
 * way, a broken download), its previous content stays in force until it reads cleanly.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { lookAgain, type FileRead, type Followed } from './followed-files.js';
import { canonicalEncoding } from './dn.js';
import type { ParsedCertificate } from './certificate.js';
import { parseCrlFile, type ParsedCrl } from './crl.js';

export const CRL_FILE = /^[0-9a-f]{8}\.r\d+$/;

/** How often a CA directory's CRLs are looked at again by default. */
export const DEFAULT_CRL_RECHECK_MS = 30_000;

export type RevocationStatus =
  | { readonly state: 'revoked'; readonly by: string; readonly at: Date }
  | { readonly state: 'crl-expired'; readonly by: string; readonly at: Date };

export interface CrlProblem {
  readonly file: string;
  readonly reason: string;
}

export interface CrlLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

interface Loaded {
  readonly crl: ParsedCrl;
  /** Whether the CRL verifies with a certificate's key, by that certificate's fingerprint. */
  readonly verified: Map<string, boolean>;
}

export class CrlDirectory {
  #files: ReadonlyMap<string, Followed<Loaded>> = new Map();
  #byIssuer = new Map<string, Loaded[]>();
  #checkedAt = -Infinity;
  #generation = 0;
  #problems: CrlProblem[] = [];

  constructor(
    readonly dir: string,
    readonly recheckMs: number = DEFAULT_CRL_RECHECK_MS,
    readonly log?: CrlLog,
  ) {}

  /** Changes with every reload that changed anything. */
  get generation(): number {
    return this.#generation;
  }

  /** CRL files that could not be used at the last look, and why. */
  get problems(): readonly CrlProblem[] {
    return this.#problems;
  }

  get count(): number {
    return this.#files.size;
  }

  /** Look at the directory again if `recheckMs` has passed since the last look (or `force`: SIGHUP). */
  refresh(now: number, force = false): number {
    if (!force && now - this.#checkedAt < this.recheckMs) return this.#generation;
    this.#checkedAt = now;
    this.#scan();
    return this.#generation;
  }

  #scan(): void {
    let names: string[];
    try {
      names = readdirSync(this.dir)
        .filter((n) => CRL_FILE.test(n))
        .sort();
    } catch (e) {
      // Keep what we have: a CA directory briefly unreadable (being replaced) revokes nothing less.
      this.log?.warn(
        { dir: this.dir, code: (e as NodeJS.ErrnoException).code },
        'CA directory unreadable; CRLs kept as they were',
      );
      return;
    }
    const look = lookAgain(this.dir, names, this.#files, (path): FileRead<Loaded> => {
      try {
        return { value: { crl: parseCrlFile(readFileSync(path)), verified: new Map() } };
      } catch (e) {
        return { problem: e instanceof Error ? e.message : 'unreadable' };
      }
    });
    for (const p of look.problems)
      this.log?.warn({ file: p.file, reason: p.reason, kept: p.kept }, 'CRL file not usable');
    this.#problems = look.problems.map((p) => ({ file: p.file, reason: p.reason }));
    this.#files = look.files;
    if (!look.changed) return;
    const next = look.files;
    const byIssuer = new Map<string, Loaded[]>();
    for (const { value: l } of next.values()) {
      const k = canonicalEncoding(l.crl.issuer).toString('hex');
      const list = byIssuer.get(k);
      if (list === undefined) byIssuer.set(k, [l]);
      else list.push(l);
    }
    this.#byIssuer = byIssuer;
    this.#generation++;
    this.log?.info({ dir: this.dir, crls: next.size, generation: this.#generation }, 'CRLs loaded');
  }

  /** Whether `cert`, issued by `issuer`, is revoked (or its CA's CRL is stale) at `now`. */
  status(cert: ParsedCertificate, issuer: ParsedCertificate, now: number): RevocationStatus | undefined {
    const newest = this.#newest(cert.issuer, issuer);
    if (newest === undefined) return undefined;
    const at = newest.revoked.get(cert.serialHex);
    if (at !== undefined) return { state: 'revoked', by: newest.issuerOneline, at };
    if (newest.nextUpdate !== undefined && now > newest.nextUpdate.getTime())
      return { state: 'crl-expired', by: newest.issuerOneline, at: newest.nextUpdate };
    return undefined;
  }

  /**
   * The CAs among `cas` whose CRL in force is past its nextUpdate at `now`: every
   * certificate they issued is refused (`status` says 'crl-expired') until a fresh one comes.
   */
  expiredFor(cas: readonly ParsedCertificate[], now: number): { ca: ParsedCertificate; nextUpdate: Date }[] {
    const expired: { ca: ParsedCertificate; nextUpdate: Date }[] = [];
    for (const ca of cas) {
      const next = this.#newest(ca.subject, ca)?.nextUpdate;
      if (next !== undefined && now > next.getTime()) expired.push({ ca, nextUpdate: next });
    }
    return expired;
  }

  /** The most recent CRL named for `issuerName` that verifies with `issuer`'s key. */
  #newest(issuerName: ParsedCertificate['issuer'], issuer: ParsedCertificate): ParsedCrl | undefined {
    const list = this.#byIssuer.get(nameKey(issuerName));
    if (list === undefined) return undefined;
    let newest: ParsedCrl | undefined;
    for (const l of list) {
      let ok = l.verified.get(issuer.fingerprint256);
      if (ok === undefined) {
        ok = l.crl.signedBy(issuer.node.publicKey);
        l.verified.set(issuer.fingerprint256, ok);
      }
      if (ok && (newest === undefined || l.crl.thisUpdate > newest.thisUpdate)) newest = l.crl;
    }
    return newest;
  }
}

/**
 * A name's lookup key (its canonical encoding), kept per parsed name: the CAs' CRLs are
 * looked up for every trusted CA at each look and probe (expiredFor), and encoding a
 * name costs more than the lookup.
 */
const nameKeys = new WeakMap<object, string>();
function nameKey(name: ParsedCertificate['issuer']): string {
  let k = nameKeys.get(name);
  if (k === undefined) nameKeys.set(name, (k = canonicalEncoding(name).toString('hex')));
  return k;
}
