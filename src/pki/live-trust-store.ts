/**
 * The trust store of a CA directory as the running service sees it: CAs added to or
 * removed from the directory (the monthly IGTF update) are taken in by `reload`, which
 * the service calls every `tls.crlRecheckSeconds` and at once on SIGHUP; no restart.
 *
 * Each change of the CA certificates makes a new immutable store (`current`), with its
 * own cache of verified chains; the CRLs are one CrlDirectory shared by all of them.
 * `view` is a store that always answers from the current one, for parts that keep a
 * store for the service's life (delegations, the info document, token issuers' TLS).
 *
 * An update caught half way must not empty the trust store or drop a CA by accident:
 *  - a CA file that was usable and now is not keeps its previous certificates
 *    (src/pki/ca-files.ts) and is reported;
 *  - a look that finds no usable CA at all (the directory being replaced, emptied,
 *    unreadable) keeps the whole previous store, and says so.
 * A CA whose file is deleted is no longer trusted from that look on.
 */
import type { ParsedCertificate } from './certificate.js';
import { CaCertificateFiles } from './ca-files.js';
import { CrlDirectory, type CrlLog } from './revocation.js';
import { PkiError } from './pki-error.js';
import { trustStoreOf, type LoadTrustStoreOptions, type TrustStore } from './trust-store.js';

export type TrustReload =
  | { readonly outcome: 'unchanged' }
  | {
      readonly outcome: 'applied';
      readonly added: readonly ParsedCertificate[];
      readonly removed: readonly ParsedCertificate[];
    }
  /** The look found nothing usable: the previous store stays in force. */
  | { readonly outcome: 'kept'; readonly reason: string };

export class LiveTrustStore {
  readonly #files: CaCertificateFiles;
  readonly #crls: CrlDirectory;
  readonly #log: CrlLog | undefined;
  #current: TrustStore;
  /** Problems already reported (file and reason), so a file stuck half-written is said once. */
  #reported: Set<string>;
  /** Why the last look was not taken (said once until a look succeeds). */
  #kept: string | undefined;
  /** A store that answers from whichever store is current at each call. */
  readonly view: TrustStore;

  /** Reads the directory (throws PkiError like loadTrustStore when it is unusable). */
  constructor(
    readonly dir: string,
    opts: LoadTrustStoreOptions = {},
  ) {
    this.#files = new CaCertificateFiles(dir);
    this.#crls = new CrlDirectory(dir, opts.crlRecheckMs, opts.log);
    this.#log = opts.log;
    const scan = this.#files.scan();
    this.#current = trustStoreOf(dir, scan, this.#crls, opts);
    this.#reported = new Set(scan.problems.map(problemKey));
    const now = (): TrustStore => this.#current;
    this.view = {
      get anchors() {
        return now().anchors;
      },
      get problems() {
        return now().problems;
      },
      get pems() {
        return now().pems;
      },
      candidates: (issuer) => now().candidates(issuer),
      isAnchor: (cert) => now().isAnchor(cert),
      revocation: (cert, issuer, t) => now().revocation(cert, issuer, t),
      refresh: (t) => now().refresh(t),
      expiredCrls: (t) => now().expiredCrls(t),
    };
  }

  /** The store in force (a new object after every change of the CA certificates). */
  get current(): TrustStore {
    return this.#current;
  }

  /**
   * Look at the CA certificates again (and at the CRLs: at once with `force`, else when
   * their recheck time has passed). A new store is made only when the set of trusted
   * certificates changed.
   */
  reload(now: number, force = false): TrustReload {
    this.#crls.refresh(now, force);
    let scan;
    try {
      scan = this.#files.scan();
    } catch (e) {
      return this.#keep(e instanceof PkiError ? e.message : String(e));
    }
    const fresh = scan.problems.filter((p) => !this.#reported.has(problemKey(p)));
    this.#reported = new Set(scan.problems.map(problemKey));
    for (const p of fresh)
      this.#log?.warn(
        { file: p.file, reason: p.reason, kept: p.kept },
        p.kept
          ? 'CA file not usable: its previous certificates stay trusted until it reads cleanly'
          : 'CA file not usable: skipped',
      );
    if (!scan.changed && this.#kept === undefined) return { outcome: 'unchanged' };
    let next: TrustStore;
    try {
      next = trustStoreOf(this.dir, scan, this.#crls);
    } catch (e) {
      return this.#keep(e instanceof PkiError ? e.message : String(e));
    }
    this.#kept = undefined;
    const before = new Set(this.#current.anchors.map((c) => c.fingerprint256));
    const after = new Set(next.anchors.map((c) => c.fingerprint256));
    const added = next.anchors.filter((c) => !before.has(c.fingerprint256));
    const removed = this.#current.anchors.filter((c) => !after.has(c.fingerprint256));
    if (added.length === 0 && removed.length === 0) return { outcome: 'unchanged' };
    this.#current = next;
    return { outcome: 'applied', added, removed };
  }

  #keep(reason: string): TrustReload {
    if (this.#kept === reason) return { outcome: 'kept', reason };
    this.#kept = reason;
    this.#log?.warn({ dir: this.dir, reason }, 'CA directory not reloaded: the trusted CAs are kept as they were');
    return { outcome: 'kept', reason };
  }
}

function problemKey(p: { readonly file: string; readonly reason: string }): string {
  return `${p.file}\n${p.reason}`;
}
