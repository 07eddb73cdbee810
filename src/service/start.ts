/**
 * The composition root: the only place that constructs components and wires them
 * together. Order: state layout → TLS credentials (configured, or the embedded dev
 * PKI) → database → domain services → engine → HTTP app → listen. `close()` reverses it.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { listenParts } from '../config/load.js';
import { stateLayout } from './layout.js';
import { openDatabase } from '../jobs/store/database.js';
import { JobStore } from '../jobs/store/job-store.js';
import { ControlDir } from '../jobs/control-dir.js';
import { JobService } from '../jobs/job-service.js';
import { JobActions } from '../jobs/job-actions.js';
import { activityDocument, localFileText, statusFileText } from '../jobs/activity.js';
import { renderXml } from '../doc/render-xml.js';
import { buildApp } from '../http/app.js';
import { attachPeerIdentity, peerIdentity, tlsServerOptions } from '../http/tls-options.js';
import type { Authenticator } from '../http/caller.js';
import { ensureDevPki } from '../pki/dev-pki.js';
import { loadTrustStore, type TrustStore } from '../pki/trust-store.js';
import { versionsResource } from '../api/rest/versions/index.js';
import { infoResource } from '../api/rest/info/index.js';
import { jobsResource } from '../api/rest/jobs/index.js';
import { sessionResource } from '../api/rest/session/index.js';
import { diagnoseResource } from '../api/rest/diagnose/index.js';
import { SessionFiles } from '../sessions/session-files.js';
import { createInfoSource } from './info-source.js';
import { descriptionPort } from './description-port.js';
import type { TLSSocket } from 'node:tls';
import type { Resource } from '../api/rest/resource.js';
import { REST_STATES } from '../engine/states.js';
import { createEngine } from './engine.js';
import { createDelegations } from './delegations.js';
import { useLargeStreamBuffers } from '../http/stream-buffers.js';

export interface RunningService {
  /** https://host:port/arex */
  readonly url: string;
  /** The PKI folder in use: the dev PKI directory, or the configured CA directory. */
  readonly pkiDir: string;
  readonly port: number;
  close(): Promise<void>;
}

export async function startService(config: Config, log: Logger): Promise<RunningService> {
  useLargeStreamBuffers();
  const L = stateLayout(config.stateDir);
  for (const d of [L.root, L.control, L.sessions, L.delegations, L.cache, L.lrms]) mkdirSync(d, { recursive: true, mode: 0o700 });
  const { host, port } = listenParts(config.listen);
  const publicHost = config.cluster.hostname ?? (host === '127.0.0.1' || host === '::1' || host === '0.0.0.0' || host === '::' ? 'localhost' : host);

  // TLS credentials and trust.
  let certPem: string;
  let keyPem: string;
  let trust: TrustStore;
  let pkiDir: string;
  if (config.tls.hostCert !== undefined && config.tls.hostKey !== undefined && config.tls.caDir !== undefined) {
    certPem = readFileSync(config.tls.hostCert, 'utf8');
    keyPem = readFileSync(config.tls.hostKey, 'utf8');
    trust = loadTrustStore(config.tls.caDir);
    pkiDir = config.tls.caDir;
  } else {
    const pki = await ensureDevPki(L.pki, config.cluster.hostname !== undefined ? { hostname: config.cluster.hostname } : {});
    certPem = readFileSync(pki.files.hostCert, 'utf8');
    keyPem = readFileSync(pki.files.hostKey, 'utf8');
    trust = loadTrustStore(pki.files.certificatesDir);
    pkiDir = pki.dir;
  }
  for (const p of trust.problems) log.warn({ file: p.file, reason: p.reason }, 'CA directory entry skipped');

  const db = openDatabase(L.db);
  const store = new JobStore(db);
  const control = new ControlDir(L.control);
  let actualPort = port;
  const origin = (): string => `https://${publicHost}:${actualPort}`;
  const serviceUrl = (): string => config.publicUrl ?? `${origin()}${config.mountPoint}`;

  const delegations = createDelegations({ config, db, dir: L.delegations, log, trust });
  const engine = createEngine({ config, store, control, log, layout: L, delegations, serviceUrl });
  const jobs = new JobService({
    store,
    descriptions: descriptionPort(config),
    delegations: delegations.port,
    engine: engine.port,
    sessionRoot: L.sessions,
    maxInstances: config.jobs.maxInstances,
    maxRerun: config.engine.maxReruns,
    maxActivePerUser: config.jobs.maxActiveJobsPerUser,
    initialState: { state: 'ACCEPTED', restState: 'ACCEPTING' },
  });
  const activity = { hostname: publicHost, delegationsOf: (id: string) => store.delegationsOf(id), proxyExpiry: delegations.expiry };
  const actions = new JobActions(store, engine.port, (j) => activityDocument(j, activity));
  const files = new SessionFiles({ control, engine: engine.port });
  const info = createInfoSource({
    config,
    store,
    endpointUrl: serviceUrl,
    hostname: publicHost,
    sessionRoot: L.sessions,
    lrms: engine.lrmsInfo,
    trustedCas: trust.anchors.map((a) => a.subjectOneline),
    startTime: new Date(),
  });

  const authenticate: Authenticator = (req) => {
    const r = peerIdentity(req.socket as TLSSocket);
    if (!r.ok) return r;
    return { ok: true, caller: { dn: r.identity.dn, kind: 'x509', notAfter: r.identity.notAfter } };
  };
  const routes = {
    versions: versionsResource,
    info: infoResource(info),
    jobs: jobsResource({
      jobs,
      actions,
      restStates: REST_STATES,
      maxIdsPerRequest: config.jobs.maxIdsPerRequest,
      maxInfoIdsPerRequest: config.jobs.maxInfoIdsPerRequest,
      maxControlBodyBytes: config.http.maxControlBodyBytes,
      maxSubmitBodyBytes: config.http.maxSubmitBodyBytes,
    }),
    session: sessionResource({ jobs, files, maxListingEntries: config.jobs.maxListingEntries }),
    diagnose: diagnoseResource({
      jobs,
      control,
      render: (j, name) => {
        switch (name) {
          case 'description':
            return store.rawDescription(j.id);
          case 'status':
            return statusFileText(j);
          case 'local':
            return localFileText(j, serviceUrl());
          case 'xml':
            return renderXml(activityDocument(j, activity));
          default:
            return undefined;
        }
      },
    }),
    delegations: delegations.collection as Resource,
    delegation: delegations.item as Resource,
  };

  const app = buildApp({
    mountPoint: config.mountPoint,
    routes,
    authenticate,
    logger: log,
    origin,
    fastify: {
      https: { ...tlsServerOptions({ certPem, keyPem, caPems: trust.pems }), handshakeTimeout: config.tls.handshakeTimeoutSeconds * 1000 },
      keepAliveTimeout: config.http.keepAliveTimeoutSeconds * 1000,
      requestTimeout: config.http.requestTimeoutSeconds * 1000,
      // Not an idle cut-off for the whole connection: a long computation (a 100 MiB
      // submission) must get its answer; idle keep-alive sockets close by keepAliveTimeout.
      connectionTimeout: 0,
    },
  });
  attachPeerIdentity(app.server as unknown as import('node:tls').Server, trust, { log });
  await engine.start();
  await app.listen({ host, port });
  const addr = app.server.address();
  if (addr && typeof addr === 'object') actualPort = addr.port;
  log.info({ url: serviceUrl(), pki: pkiDir, hostname: osHostname() }, 'service started');

  return {
    url: serviceUrl(),
    pkiDir,
    port: actualPort,
    async close() {
      await app.close();
      await engine.stop();
      await delegations.close();
      db.close();
    },
  };
}
