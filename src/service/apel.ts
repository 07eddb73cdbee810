/**
 * Wiring of accounting sent to APEL for the composition root: the outbox and publisher
 * (src/accounting) with the signer and the messaging-service client (src/messaging),
 * and their metrics (docs/operations.md, "Accounting to APEL").
 */
import { rootCertificates } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Db } from '../store/database.js';
import type { Metrics } from '../metrics/instruments.js';
import { ApelOutbox, empaId } from '../accounting/apel-outbox.js';
import { ApelPublisher } from '../accounting/apel-publisher.js';
import { AmsClient } from '../messaging/ams-client.js';
import { smimeSigner } from '../messaging/smime-signer.js';

export interface ApelDeps {
  readonly config: Config;
  readonly db: Db;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The published host name (cluster.hostname or its default): MachineName, never the OS name. */
  readonly hostname: string;
  /** The host certificate and key: their files (the signer reads them) and contents (TLS). */
  readonly host: { readonly certFile: string; readonly keyFile: string; readonly cert: string; readonly key: string };
  /** The service's trusted CAs (PEM), besides the system's, for the messaging service's certificate. */
  readonly caPems: readonly string[];
}

export interface ApelWiring {
  start(): void;
  stop(): Promise<void>;
}

export function createApel(d: ApelDeps): ApelWiring | undefined {
  const a = d.config.accounting.apel;
  if (!a.enabled) return undefined;
  const log = d.log.child({ part: 'apel' });
  const outbox = new ApelOutbox(d.db, {
    site: a.site ?? d.config.cluster.name,
    machineName: d.hostname,
    messages: a.messages,
    batchSize: a.batchSize,
    ...(a.benchmark ? { benchmark: a.benchmark } : {}),
  });
  const client = new AmsClient({
    host: a.amsHost,
    port: a.amsPort,
    tokenPort: a.tokenPort,
    project: a.project,
    topic: a.topic,
    cert: d.host.cert,
    key: d.host.key,
    ca: [...rootCertificates, ...d.caPems],
    timeoutMs: a.timeoutSeconds * 1000,
  });
  const sign = smimeSigner({ certFile: d.host.certFile, keyFile: d.host.keyFile, timeoutMs: a.timeoutSeconds * 1000 });
  const m = d.metrics;
  m.gaugeAtScrape('ceres_apel_unqueued_records', 'Accounting records not yet put in a message for APEL', [], (set) =>
    set({}, outbox.backlog().unqueuedRecords),
  );
  m.gaugeAtScrape(
    'ceres_apel_unsent_messages',
    'Accounting messages for APEL not yet acknowledged by the messaging service',
    [],
    (set) => set({}, outbox.backlog().unsentMessages),
  );
  const publisher = new ApelPublisher({
    outbox,
    log,
    intervalMs: a.intervalSeconds * 1000,
    retryMinMs: a.retryMinSeconds * 1000,
    retryMaxMs: a.retryMaxSeconds * 1000,
    sign: (msg) => sign(msg.body),
    publish: async (msg, signed) => (await client.publish([{ attributes: { empaid: empaId(msg) }, data: signed }]))[0]!,
    onSent: (msg, seconds) => {
      m.apelMessages.inc({ kind: msg.kind, result: 'sent' });
      m.apelRecords.inc({ kind: msg.kind }, msg.records);
      m.apelSendSeconds.observe({ kind: msg.kind }, seconds);
    },
    onFailed: (msg) => m.apelMessages.inc({ kind: msg.kind, result: 'failed' }),
  });
  log.info(
    { ams: `${a.amsHost}:${a.amsPort}`, topic: `${a.project}/${a.topic}`, messages: a.messages },
    'accounting is sent to APEL',
  );
  return {
    start: () => publisher.start(),
    async stop() {
      await publisher.stop();
      client.close();
    },
  };
}
