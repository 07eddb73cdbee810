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
import { AmsClient, type AmsTls } from '../messaging/ams-client.js';
import { smimeSigner } from '../messaging/smime-signer.js';

export interface ApelDeps {
  readonly config: Config;
  readonly db: Db;
  readonly log: Logger;
  readonly metrics: Metrics;
  /** The published host name (cluster.hostname or its default): MachineName, never the OS name. */
  readonly hostname: string;
  /**
   * The host certificate and key: their files (the signer reads them at each message) and the
   * pair in use now (the TLS client certificate; a pair renewed at SIGHUP from the next call on).
   */
  readonly host: {
    readonly certFile: string;
    readonly keyFile: string;
    readonly current: () => { readonly certPem: string; readonly keyPem: string };
  };
  /** The service's trusted CAs (PEM) now, besides the system's, for the messaging service's certificate. */
  readonly caPems: () => readonly string[];
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
  // The CA list is built again only when the trust store changed (the client compares it).
  let cas: { from: readonly string[]; all: readonly string[] } | undefined;
  const tlsNow = (): AmsTls => {
    const from = d.caPems();
    if (cas?.from !== from) cas = { from, all: [...rootCertificates, ...from] };
    const h = d.host.current();
    return { cert: h.certPem, key: h.keyPem, ca: cas.all };
  };
  const client = new AmsClient({
    host: a.amsHost,
    port: a.amsPort,
    tokenPort: a.tokenPort,
    project: a.project,
    topic: a.topic,
    ...tlsNow(),
    currentTls: tlsNow,
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
