/**
 * Wiring of the delegation service for the composition root.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Db } from '../jobs/store/database.js';
import type { DelegationPort } from '../jobs/ports.js';
import type { Resource } from '../api/rest/resource.js';
import type { TrustStore } from '../pki/trust-store.js';
import { el } from '../doc/element.js';
import { sendDoc } from '../http/send.js';

export interface DelegationsWiring {
  readonly port: DelegationPort;
  readonly collection: Resource;
  readonly item: Resource;
  expiry(delegationId: string): Date | undefined;
  close(): Promise<void>;
}

export interface DelegationDeps {
  config: Config;
  db: Db;
  dir: string;
  log: Logger;
  trust: TrustStore;
}

export function createDelegations(_d: DelegationDeps): DelegationsWiring {
  return {
    port: { ownedBy: () => false },
    collection: { methods: { GET: (req) => sendDoc(req.reply, req.format, 200, el('delegations'), ['delegation']) } },
    item: { methods: {} },
    expiry: () => undefined,
    close: async () => undefined,
  };
}
