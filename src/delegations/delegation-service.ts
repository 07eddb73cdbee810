/**
 * Delegations: the user's credentials the service holds for data staging (spec §4.5).
 *
 *   X.509 (two steps): `createX509` makes a key pair and a certificate request; the
 *   client signs it with its proxy and `acceptCertificate` stores key + chain as a
 *   proxy file. `renewX509` hands out a new request for the same delegation; until its
 *   certificate arrives, the current credential stays in use.
 *   JWT (1.1): `createJwt` / `renewJwt` store a token as given (sanity-checked only).
 *
 * Ownership: every operation is for one owner (the caller's owner key, src/http/caller.ts); another
 * owner's delegation is indistinguishable from a missing one (404).
 *
 * Lifetime: a delegation is "offered" (listed, accepted for new jobs, handed to data
 * staging) while it holds a credential that has not expired. After expiry its owner
 * can still renew, get or delete it for `expiredRetentionMs`; then the sweep removes
 * it. A certificate request lapses after `requestLifetimeMs`; a delegation that never
 * got its first certificate is then removed. Deleting removes it at once, but not
 * while jobs that have not ended use it (409).
 *
 * Storage: metadata rows in SQLite, key material in 0600 files (key-files.ts);
 * the durable row update is the commit point of every change, so an answered request
 * survives kill -9 and a crash mid-way leaves only orphaned files for the sweep.
 * Secrets (keys, tokens) are never logged and never appear in errors.
 */
import type { Logger } from 'pino';
import { ceError } from '../errors/ce-error.js';
import type { TrustStore } from '../pki/trust-store.js';
import { generateRsaKeyPair } from '../pki/keys.js';
import type { CryptoKeyPair } from '../pki/x509-lib.js';
import { isWellFormedDelegationId, newDelegationId } from './delegation-id.js';
import type { DelegationRow, DelegationStore, RowChanges } from '../store/delegation-store.js';
import type { KeyFileKind, KeyFiles } from './key-files.js';
import { makeCertificateRequest, publicKeyOfPrivatePem } from './x509/certificate-request.js';
import { acceptDelegatedChain, type KeyCandidate } from './x509/accept-chain.js';
import { certificatesPem, composeProxyFile, keyPem } from './x509/proxy-file.js';
import { checkDelegatedToken } from './jwt/token.js';
import type {
  DelegatedCredential,
  DelegationListItem,
  DelegationSettings,
  DelegationType,
  StoredPublicPart,
} from '../vocabulary/delegations.js';

export interface DelegationServiceOptions {
  readonly store: DelegationStore;
  readonly files: KeyFiles;
  readonly trust: TrustStore;
  readonly log: Logger;
  readonly settings: DelegationSettings;
  /**
   * Fresh RSA key pairs (of `settings.keyBits`) for certificate requests, each handed out
   * once; the wiring passes a KeyPool. Default: one made on the spot per request.
   */
  readonly newKeyPair?: () => Promise<CryptoKeyPair>;
  /** Clock (ms); tests move it to exercise expiry. */
  readonly now?: () => number;
  /** A delegation's credential was replaced (renewal): copies held for jobs follow it. */
  readonly onRenewed?: (id: string) => void;
}

export interface SweepResult {
  /** Expired delegations past the grace period, removed. */
  readonly expired: number;
  /** Certificate requests that lapsed (and delegations that never got a certificate). */
  readonly lapsedRequests: number;
  /** Files no row refers to (left by a crash mid-write), removed. */
  readonly orphanFiles: number;
}

/** Concurrent changes to one delegation are retried this often before giving up. */
const MAX_ATTEMPTS = 5;

export class DelegationService {
  readonly #o: DelegationServiceOptions;
  readonly #now: () => number;
  readonly #newKeyPair: () => Promise<CryptoKeyPair>;

  constructor(o: DelegationServiceOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.#newKeyPair = o.newKeyPair ?? (() => generateRsaKeyPair(o.settings.keyBits));
  }

  // ------------------------------------------------------------------ listing, lookups

  /** The owner's offered delegations (unexpired, holding a credential), optionally of one type. */
  list(owner: string, type?: DelegationType): DelegationListItem[] {
    return this.#o.store.listOffered(owner, this.#now(), type);
  }

  /** The type of one of the owner's delegations (404 otherwise). */
  typeOf(owner: string, id: string): DelegationType {
    return this.#owned(owner, id).type;
  }

  /** True when jobs of `owner` may name delegation `id` (DelegationPort). */
  ownedBy(id: string, owner: string): boolean {
    if (!isWellFormedDelegationId(id)) return false;
    const row = this.#o.store.get(id);
    return row !== undefined && row.owner === owner && this.#offered(row, this.#now());
  }

  /** notAfter of the current X.509 credential (the job info's ProxyExpirationTime). */
  expiry(id: string): Date | undefined {
    if (!isWellFormedDelegationId(id)) return undefined;
    const row = this.#o.store.get(id);
    return row?.type === 'x509' && row.credFile !== null && row.expiresAt !== null
      ? new Date(row.expiresAt)
      : undefined;
  }

  /**
   * The credential data staging presents for a job of `owner`: read from the current
   * file at every call, so a renewal is used by the next transfer. Undefined when the
   * job has no delegation, or it is gone, expired, not the owner's, or incomplete.
   */
  async credentialFor(id: string | undefined, owner: string): Promise<DelegatedCredential | undefined> {
    if (id === undefined || !isWellFormedDelegationId(id)) return undefined;
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const row = this.#o.store.get(id);
      if (row === undefined || row.owner !== owner || !this.#offered(row, this.#now()) || row.credFile === null)
        return undefined;
      const text = await this.#readIfPresent(row.credFile);
      if (text === undefined) continue; // replaced by a renewal meanwhile: read the row again
      return row.type === 'x509'
        ? { kind: 'x509', certChainPem: certificatesPem(text), keyPem: keyPem(text) }
        : { kind: 'jwt', token: text };
    }
    return undefined;
  }

  /** action=get: the public part of an X.509 delegation (certificates, no key), or the token. */
  async publicPart(owner: string, id: string): Promise<StoredPublicPart> {
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const row = this.#owned(owner, id);
      if (row.credFile === null)
        throw ceError(
          'CE_ERR_DELEG_NO_CREDENTIAL',
          `Delegation ${id} holds no credential yet: PUT the signed certificate first`,
        );
      const text = await this.#readIfPresent(row.credFile);
      if (text === undefined) continue;
      return row.type === 'x509' ? { type: 'x509', pem: certificatesPem(text) } : { type: 'jwt', token: text };
    }
    throw new Error(`delegation ${id}: credential file kept changing`);
  }

  // ------------------------------------------------------------------ X.509

  /** action=new (x509): a new delegation with an outstanding certificate request. */
  async createX509(owner: string): Promise<{ id: string; csrPem: string }> {
    this.#checkQuota(owner);
    const id = newDelegationId();
    const req = await makeCertificateRequest(await this.#newKeyPair());
    const now = this.#now();
    await this.#writeThen(id, 'req', req.keyPem, (reqFile) => {
      this.#o.store.insert(
        {
          id,
          owner,
          type: 'x509',
          credFile: null,
          expiresAt: null,
          reqFile,
          reqExpiresAt: now + this.#o.settings.requestLifetimeMs,
        },
        now,
      );
      return true;
    });
    this.#o.log.info({ delegation: id, owner, type: 'x509' }, 'delegation created, certificate request issued');
    return { id, csrPem: req.csrPem };
  }

  /** action=renew (x509): a new certificate request; the current credential stays until its successor arrives. */
  async renewX509(owner: string, id: string): Promise<{ csrPem: string }> {
    this.#expectType(this.#owned(owner, id), 'x509');
    const req = await makeCertificateRequest(await this.#newKeyPair());
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const row = this.#owned(owner, id);
      const now = this.#now();
      const done = await this.#writeThen(
        id,
        'req',
        req.keyPem,
        (reqFile) =>
          this.#o.store.update(row, { reqFile, reqExpiresAt: now + this.#o.settings.requestLifetimeMs }, now) !==
          undefined,
      );
      if (!done) continue;
      await this.#o.files.remove(row.reqFile);
      this.#o.log.info({ delegation: id, owner, type: 'x509' }, 'delegation renewal: certificate request issued');
      return { csrPem: req.csrPem };
    }
    throw new Error(`delegation ${id}: changed concurrently too often`);
  }

  /** PUT: store the signed proxy (with the key it certifies) as the current credential. */
  /** `callerChain`: the caller's TLS client chain, which completes a body holding the proxy alone. */
  /** `anyIdentity`: the caller is a bearer-token owner, which has no DN the chain could be checked against. */
  async acceptCertificate(
    owner: string,
    id: string,
    body: Buffer,
    callerChain: readonly Uint8Array[] = [],
    anyIdentity = false,
  ): Promise<{ notAfter: Date }> {
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const row = this.#owned(owner, id);
      this.#expectType(row, 'x509');
      const now = this.#now();
      const reqKey =
        row.reqFile !== null && (row.reqExpiresAt ?? 0) > now ? await this.#readIfPresent(row.reqFile) : undefined;
      const current = row.credFile !== null ? await this.#readIfPresent(row.credFile) : undefined;
      const currentKey = current === undefined ? undefined : keyPem(current);
      const candidates: KeyCandidate[] = [];
      if (reqKey !== undefined) candidates.push({ key: publicKeyOfPrivatePem(reqKey), source: 'request' });
      if (currentKey !== undefined) candidates.push({ key: publicKeyOfPrivatePem(currentKey), source: 'current' });
      const ok = acceptDelegatedChain(
        body,
        candidates,
        anyIdentity ? undefined : owner,
        this.#o.trust,
        new Date(now),
        callerChain,
      );
      const key = ok.matched === 'request' ? (reqKey as string) : (currentKey as string);
      const changes: RowChanges = { expiresAt: ok.notAfter.getTime() };
      if (ok.matched === 'request') Object.assign(changes, { reqFile: null, reqExpiresAt: null });
      const done = await this.#writeThen(
        id,
        'proxy',
        composeProxyFile(ok.chainDer, key),
        (credFile) => this.#o.store.update(row, { ...changes, credFile }, now) !== undefined,
      );
      if (!done) continue;
      await this.#o.files.remove(row.credFile);
      if (ok.matched === 'request') await this.#o.files.remove(row.reqFile);
      this.#o.log.info(
        { delegation: id, owner, type: 'x509', notAfter: ok.notAfter.toISOString() },
        'delegated proxy stored',
      );
      this.#o.onRenewed?.(id);
      return { notAfter: ok.notAfter };
    }
    throw new Error(`delegation ${id}: changed concurrently too often`);
  }

  // ------------------------------------------------------------------ JWT

  /** action=new&type=jwt: store a token as a new delegation. */
  async createJwt(owner: string, token: string): Promise<{ id: string }> {
    const now = this.#now();
    const t = checkDelegatedToken(token, this.#o.settings.maxTokenBytes, now);
    this.#checkQuota(owner);
    const id = newDelegationId();
    await this.#writeThen(id, 'jwt', t.token, (credFile) => {
      this.#o.store.insert(
        { id, owner, type: 'jwt', credFile, expiresAt: t.expiresAt ?? null, reqFile: null, reqExpiresAt: null },
        now,
      );
      return true;
    });
    this.#o.log.info({ delegation: id, owner, type: 'jwt' }, 'token delegation stored');
    return { id };
  }

  /** action=renew on a jwt delegation: replace the token (A-REX 7 ignores the new one; we do not). */
  async renewJwt(owner: string, id: string, token: string): Promise<void> {
    this.#expectType(this.#owned(owner, id), 'jwt');
    const t = checkDelegatedToken(token, this.#o.settings.maxTokenBytes, this.#now());
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const row = this.#owned(owner, id);
      const now = this.#now();
      const done = await this.#writeThen(
        id,
        'jwt',
        t.token,
        (credFile) => this.#o.store.update(row, { credFile, expiresAt: t.expiresAt ?? null }, now) !== undefined,
      );
      if (!done) continue;
      await this.#o.files.remove(row.credFile);
      this.#o.log.info({ delegation: id, owner, type: 'jwt' }, 'token delegation renewed');
      this.#o.onRenewed?.(id);
      return;
    }
    throw new Error(`delegation ${id}: changed concurrently too often`);
  }

  // ------------------------------------------------------------------ deletion, lifetime

  /** action=delete: remove at once, unless jobs that have not ended use it. */
  async remove(owner: string, id: string): Promise<void> {
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const row = this.#owned(owner, id);
      const active = this.#o.store.activeJobsUsing(id);
      if (active > 0)
        throw ceError(
          'CE_ERR_DELEG_IN_USE',
          `Delegation ${id} is used by ${active} job(s) that have not ended; delete it after they end`,
        );
      if (!this.#o.store.delete(row)) continue;
      await this.#o.files.remove(row.credFile);
      await this.#o.files.remove(row.reqFile);
      this.#o.log.info({ delegation: id, owner, type: row.type }, 'delegation deleted');
      return;
    }
    throw new Error(`delegation ${id}: changed concurrently too often`);
  }

  /** Remove what has run out: expired delegations past the grace period, lapsed requests, orphaned files. */
  async sweep(): Promise<SweepResult> {
    const { store, files, settings, log } = this.#o;
    const now = this.#now();
    let expired = 0;
    let lapsedRequests = 0;
    for (let round = 0; round < 100; round++) {
      const batch = store.listExpiredBefore(now - settings.expiredRetentionMs);
      for (const row of batch) {
        if (!store.delete(row, false)) continue;
        await files.remove(row.credFile);
        await files.remove(row.reqFile);
        expired++;
        log.info({ delegation: row.id, owner: row.owner, type: row.type }, 'expired delegation removed');
      }
      if (batch.length < 1000) break;
    }
    for (let round = 0; round < 100; round++) {
      const batch = store.listLapsedRequests(now);
      for (const row of batch) {
        const gone =
          row.credFile === null
            ? store.delete(row, false)
            : store.update(row, { reqFile: null, reqExpiresAt: null }, now, false) !== undefined;
        if (!gone) continue;
        await files.remove(row.reqFile);
        lapsedRequests++;
      }
      if (batch.length < 1000) break;
    }
    const orphanFiles = await files.removeOrphans(() => store.referencedFiles());
    if (lapsedRequests > 0 || orphanFiles > 0) log.info({ lapsedRequests, orphanFiles }, 'delegation sweep');
    return { expired, lapsedRequests, orphanFiles };
  }

  // ------------------------------------------------------------------ helpers

  /**
   * The owner's delegation `id`, or 404. Past its grace period, or a request that
   * lapsed before any certificate arrived, it no longer exists even if the sweep has
   * not removed it yet.
   */
  #owned(owner: string, id: string): DelegationRow {
    const row = isWellFormedDelegationId(id) ? this.#o.store.get(id) : undefined;
    const now = this.#now();
    const gone =
      row === undefined ||
      row.owner !== owner ||
      (row.expiresAt !== null && row.expiresAt < now - this.#o.settings.expiredRetentionMs) ||
      (row.credFile === null && (row.reqExpiresAt ?? 0) < now);
    if (gone)
      throw ceError('CE_ERR_DELEG_NOT_FOUND', isWellFormedDelegationId(id) ? `No such delegation: ${id}` : undefined);
    return row;
  }

  #offered(row: DelegationRow, now: number): boolean {
    return row.credFile !== null && (row.expiresAt === null || row.expiresAt > now);
  }

  #expectType(row: DelegationRow, type: DelegationType): void {
    if (row.type !== type) {
      throw ceError(
        'CE_ERR_DELEG_TYPE_MISMATCH',
        type === 'x509'
          ? `Delegation ${row.id} is a jwt delegation: it takes no certificate request or certificate`
          : `Delegation ${row.id} is an x509 delegation, not a jwt one`,
      );
    }
  }

  #checkQuota(owner: string): void {
    const max = this.#o.settings.maxPerUser;
    if (this.#o.store.countLive(owner, this.#now()) >= max)
      throw ceError(
        'CE_ERR_DELEG_TOO_MANY',
        `Too many delegations for this user (at most ${max}); delete unused ones or reuse one`,
      );
  }

  /**
   * Write a new key file, then run `commit` (the database change naming it). When the
   * commit fails or reports a lost race (false), the file is removed again.
   */
  async #writeThen(id: string, kind: KeyFileKind, data: string, commit: (name: string) => boolean): Promise<boolean> {
    const { files } = this.#o;
    const name = files.reserve(id, kind);
    let committed = false;
    try {
      await files.write(name, data);
      committed = commit(name);
      return committed;
    } finally {
      if (!committed) await files.remove(name).catch(() => undefined);
      files.settle(name);
    }
  }

  async #readIfPresent(name: string): Promise<string | undefined> {
    try {
      return await this.#o.files.read(name);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }
}
