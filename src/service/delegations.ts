/**
 * Wiring of the delegation service for the composition root: the REST resources, the
 * port job submission asks (may this owner name this delegation?), the proxy expiry
 * for job info documents, the credential source for data staging, and the periodic
 * sweep of expired delegations (a timer owned here, stopped by `close`), and the pool of key
 * pairs made ahead of time (dropped by `close`).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Db } from '../store/database.js';
import type { DelegationPort } from '../jobs/ports.js';
import type { Resource } from '../api/rest/resource.js';
import type { TrustStore } from '../pki/trust-store.js';
import { delegationsResources } from '../api/rest/delegations/index.js';
import { DelegationService } from '../delegations/delegation-service.js';
import { DelegationStore } from '../store/delegation-store.js';
import { KeyFiles } from '../delegations/key-files.js';
import { KeyPool } from '../delegations/x509/key-pool.js';
import { generateRsaKeyPair } from '../pki/keys.js';
import type { DelegatedCredential } from '../vocabulary/delegations.js';

export interface DelegationsWiring {
  readonly port: DelegationPort;
  readonly collection: Resource;
  readonly item: Resource;
  /** notAfter of an X.509 delegation's current proxy (ProxyExpirationTime). */
  expiry(delegationId: string): Date | undefined;
  /**
   * The credential data staging presents for a job: the delegation's current one, read
   * at every call (a renewal is picked up by the next transfer); undefined when the job
   * has no delegation or it is gone, expired or not the owner's.
   */
  credentialFor(delegationId: string | undefined, ownerDn: string): Promise<DelegatedCredential | undefined>;
  /** Fill the delegation key pool in the background (once the service is serving). */
  primeKeys(): void;
  /** The service itself (tests, and future admin commands). */
  readonly service: DelegationService;
  /** Calls `fn` with the id of every delegation whose credential is replaced (renewed). */
  onRenewed(fn: (id: string) => void): void;
  close(): Promise<void>;
}

export interface DelegationDeps {
  config: Config;
  db: Db;
  /** Directory of key material (<state>/delegations). */
  dir: string;
  log: Logger;
  trust: TrustStore;
  /** Clock (ms) for tests; default Date.now. */
  now?: () => number;
}

export function createDelegations(d: DelegationDeps): DelegationsWiring {
  const c = d.config.delegations;
  const log = d.log.child({ part: 'delegations' });
  // Secrets live here: readable by the service only, whatever the umask made of it.
  mkdirSync(d.dir, { recursive: true, mode: 0o700 });
  chmodSync(d.dir, 0o700);
  const renewed: ((id: string) => void)[] = [];
  const keys = new KeyPool({
    size: c.keyPoolSize,
    generate: () => generateRsaKeyPair(c.keyBits),
    onError: (e) =>
      log.error(
        { err: e },
        'making a key pair ahead of time failed; keys are made on request until the next one succeeds',
      ),
  });
  const service = new DelegationService({
    store: new DelegationStore(d.db),
    files: new KeyFiles(d.dir),
    trust: d.trust,
    log,
    settings: {
      keyBits: c.keyBits,
      requestLifetimeMs: c.requestLifetimeSeconds * 1000,
      expiredRetentionMs: c.expiredRetentionSeconds * 1000,
      maxPerUser: c.maxPerUser,
      maxTokenBytes: c.maxTokenBytes,
    },
    newKeyPair: () => keys.take(),
    ...(d.now !== undefined ? { now: d.now } : {}),
    onRenewed: (id) => {
      for (const fn of renewed) fn(id);
    },
  });
  const { collection, item } = delegationsResources({ service, maxCertificateBodyBytes: c.maxCertificateBodyBytes });

  // One sweep at a time; the first one right away clears what a crash left behind.
  let running: Promise<unknown> | undefined;
  let closed = false;
  const sweep = (): void => {
    if (running !== undefined || closed) return;
    running = service
      .sweep()
      .catch((e: unknown) => log.error({ err: e }, 'delegation sweep failed'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(sweep, c.sweepIntervalSeconds * 1000);
  timer.unref();
  sweep();

  return {
    port: { ownedBy: (id, owner) => service.ownedBy(id, owner) },
    collection,
    item,
    expiry: (id) => service.expiry(id),
    credentialFor: (id, owner) => service.credentialFor(id, owner),
    service,
    primeKeys: () => keys.prime(),
    onRenewed: (fn) => void renewed.push(fn),
    async close() {
      closed = true;
      keys.close();
      clearInterval(timer);
      await running;
    },
  };
}
