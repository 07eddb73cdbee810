/**
 * The CRLs of a CA directory (`<hash>.r0`, `.r1`, ...), kept current while the service
 * runs: fetch-crl rewrites them every few hours, in place or by rename. The directory is
 * looked at again at most every `recheckMs`, from the verification path itself (no
 * timer to stop): one readdir and one stat per CRL file; only files whose inode, size or
 * times changed are read again. Each change bumps `generation`, which the verified-chain
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
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
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
  readonly stamp: string;
  readonly crl: ParsedCrl;
  /** Whether the CRL verifies with a certificate's key, by that certificate's fingerprint. */
  readonly verified: Map<string, boolean>;
}

export class CrlDirectory {
  #files = new Map<string, Loaded>();
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

  /** Look at the directory again if `recheckMs` has passed since the last look. */
  refresh(now: number): number {
    if (now - this.#checkedAt < this.recheckMs) return this.#generation;
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
    const next = new Map<string, Loaded>();
    const problems: CrlProblem[] = [];
    let changed = false;
    for (const name of names) {
      const path = join(this.dir, name);
      const before = this.#files.get(name);
      let stamp: string;
      try {
        const st = statSync(path);
        stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      } catch {
        continue; // removed between readdir and stat
      }
      if (before !== undefined && before.stamp === stamp) {
        next.set(name, before);
        continue;
      }
      try {
        next.set(name, { stamp, crl: parseCrlFile(readFileSync(path)), verified: new Map() });
        changed = true;
      } catch (e) {
        const reason = e instanceof Error ? e.message : 'unreadable';
        problems.push({ file: name, reason });
        this.log?.warn({ file: name, reason, kept: before !== undefined }, 'CRL file not usable');
        // The previous content stays; the stale stamp makes the next look read it again.
        if (before !== undefined) next.set(name, { ...before, stamp: `retry:${stamp}` });
      }
    }
    for (const name of this.#files.keys()) if (!next.has(name)) changed = true;
    this.#problems = problems;
    if (!changed) {
      this.#files = next;
      return;
    }
    this.#files = next;
    const byIssuer = new Map<string, Loaded[]>();
    for (const l of next.values()) {
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
    const list = this.#byIssuer.get(canonicalEncoding(cert.issuer).toString('hex'));
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
    if (newest === undefined) return undefined;
    const at = newest.revoked.get(cert.serialHex);
    if (at !== undefined) return { state: 'revoked', by: newest.issuerOneline, at };
    if (newest.nextUpdate !== undefined && now > newest.nextUpdate.getTime())
      return { state: 'crl-expired', by: newest.issuerOneline, at: newest.nextUpdate };
    return undefined;
  }
}
