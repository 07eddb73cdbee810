/**
 * The composition root: the only place that constructs components and wires them
 * together. Order: state-directory lock → state layout → TLS credentials (configured,
 * or the embedded dev PKI) → database → domain services → engine wiring → HTTP app →
 * listen → engine start. `close()` reverses it.
 *
 * Invariants: nothing touches the state directory before its lock is held (one service
 * per state directory, src/process/state-lock.ts), and the engine (which runs jobs)
 * starts only once the listener is up: a service that cannot listen must not run jobs
 * from the database. Any failure on the way undoes what was started and rejects with
 * a StartError the command prints.
 */
import { mkdirSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { listenParts } from '../config/load.js';
import { stateLayout } from '../process/layout.js';
import { openDatabase, SchemaTooNewError } from '../store/database.js';
import { StartError } from '../process/start-error.js';
import { createOperations } from './operations.js';
import { createApel } from './apel.js';
import { JobStore } from '../store/job-store.js';
import { ControlDir } from '../store/control-dir.js';
import { SiteSeries } from '../store/site-series.js';
import { makePrivateFile, setStateModes } from '../process/state-modes.js';
import { checkAccountsAtStart, describeJobAccounts } from './account-checks.js';
import { refusal, runConfigChecks } from './config-checks.js';
import { routeProblems } from '../jobs/routes.js';
import { AccountResolver } from '../accounts/resolve-account.js';
import { sessionOwnerFor } from '../accounts/session-owner-for.js';
import { JobService } from '../jobs/job-service.js';
import { JobActions } from '../jobs/job-actions.js';
import { activityWriter } from '../jobs/activity.js';
import { waitReason } from '../jobs/wait-reason.js';
import type { JobRecord } from '../store/job-record.js';
import { diagnoseItemRenderer } from '../jobs/diagnose-items.js';
import { bodyRateHook } from '../http/body-rate.js';
import { buildApp } from '../api/app.js';
import { attachPeerIdentity, connectionKey, tlsServerOptions } from '../http/tls-options.js';
import { createAuth } from './authorization.js';
import { createTokenAuth } from './tokens.js';
import { ensureDevIssuer, type DevIssuer } from '../auth/token/dev-issuer.js';
import { CallerTokenDelegations } from '../auth/token/job-credential.js';
import { limitConnectionsPerIdentity } from '../http/fairness.js';
import { VomsVerifier } from '../auth/voms/voms-verifier.js';
import { ensureDevPki } from '../pki/dev-pki.js';
import { LiveTrustStore } from '../pki/live-trust-store.js';
import { readHostCredentials, type HostCredentials } from '../pki/host-credentials.js';
import { PkiError } from '../pki/pki-error.js';
import { TrustWatch } from './trust-watch.js';
import type { TrustStore } from '../pki/trust-store.js';
import { versionsResource } from '../api/rest/versions/index.js';
import { infoResource } from '../api/rest/info/index.js';
import { jobsResource } from '../api/rest/jobs/index.js';
import { eventStreams } from '../api/rest/jobs/event-stream.js';
import { sessionResource } from '../api/rest/session/index.js';
import { diagnoseResource } from '../api/rest/diagnose/index.js';
import { SessionFiles } from '../sessions/session-files.js';
import { SessionDirs } from '../sessions/session-dirs.js';
import { sessionRecords } from './session-records.js';
import { createInfoSource } from '../info/info-source.js';
import { descriptionPort } from '../jobs/description-port.js';
import { s3UrlRefusal, schemeRegistry } from '../staging/index.js';
import type { Server as TlsServer, TLSSocket } from 'node:tls';
import { REST_STATES, restState } from '../vocabulary/job-states.js';
import { initialState } from '../engine/states.js';
import { createEngine } from './engine.js';
import { createDelegations } from './delegations.js';
import { createEvents } from './events.js';
import { useLargeStreamBuffers } from '../http/stream-buffers.js';
import { lockStateDir, type StateLock } from '../process/state-lock.js';
import { listenError } from '../process/start-error.js';
import { startHeapPolicy } from '../process/heap-policy.js';
import { loadNativeMemory, startTrimPolicy, type TrimPolicy } from '../process/malloc-trim.js';
import { defaultPublicHost } from '../config/public-host.js';
import { LiveConfig, type ReloadPlan } from './live-config.js';
import { checkAuthorizationConfig } from '../config/authorization-check.js';
import { createMonitoring } from './monitoring.js';
import { guardDiskSpace } from '../api/rest/disk-guard.js';
import { instrumentHttp } from '../api/http-metrics.js';
import { healthRoutes } from '../api/health-routes.js';
import { wireWeb } from './web.js';
import { startLdifPublisher, type LdifPublisher } from './infosys-ldif.js';

export interface RunningService {
  /** https://host:port/arex */
  readonly url: string;
  /** The PKI folder in use: the dev PKI directory, or the configured CA directory. */
  readonly pkiDir: string;
  /** Whether `pkiDir` is the development PKI (else it is the site's CA directory). */
  readonly devPki: boolean;
  /** The development token issuer trusted by this service, when it is (development PKI only). */
  readonly devTokenIssuer?: string;
  /** Who jobs run as (`ceres: jobs run as ...` at start). */
  readonly jobAccounts: string;
  readonly port: number;
  /** http://host:port/metrics of the loopback listener, when configured. */
  readonly metricsUrl?: string;
  /**
   * Reload (SIGHUP): `load` reads and validates the configuration again. Its reloadable
   * keys take effect; it says which changed keys need a restart. A configuration that
   * does not load is refused whole and the running one stays (logged with the reason).
   */
  reload(load: () => Config): ReloadPlan | { readonly refused: string };
  close(): Promise<void>;
}

export async function startService(config: Config, log: Logger): Promise<RunningService> {
  useLargeStreamBuffers();
  mkdirSync(config.stateDir, { recursive: true, mode: 0o700 });
  const lock = lockStateDir(config.stateDir);
  try {
    return await startLocked(config, log, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

async function startLocked(initial: Config, log: Logger, lock: StateLock): Promise<RunningService> {
  const startedAt = Date.now();
  // gfal2's plugins, asked once (a Python process of ~0.4 s, nearly all of it waiting): asked
  // now, so the answer comes while the rest starts; a URL scheme nothing here speaks is
  // refused at submission. The probe never rejects (nothing known: native schemes only).
  const schemesProbe = schemeRegistry();
  // Everything below reads the live view: a reload changes its reloadable keys only.
  const live = new LiveConfig(initial);
  const config = live.view;
  const configured = stateLayout(config.stateDir, config.sessions.root);
  for (const d of [configured.root, configured.control, configured.delegations, configured.cache, configured.lrms])
    mkdirSync(d, { recursive: true, mode: 0o700 });
  mkdirSync(configured.sessions, { recursive: true, mode: 0o711 });
  setStateModes(configured);
  const accounts = new AccountResolver(60_000, {
    minUid: config.accounts.minUid,
    exempt: config.accounts.default,
  });
  // What `ceres admin config check` checks, the same list: the start refuses on its
  // problems (all of them said at once) and logs its warnings.
  const problems = await runConfigChecks(config, {
    root: process.geteuid?.() === 0,
    resolver: accounts,
    env: process.env,
  });
  for (const p of problems) if (p.warning === true) log.warn({ key: p.key, problem: p.message }, 'configuration');
  const refused = refusal(problems);
  if (refused !== undefined) throw new StartError(refused);
  // Jobs under local accounts: refuse what cannot work before anything else starts. A
  // grid user's job never runs as root (docs/security.md): accounts below minUid are
  // refused, and a root service without a mapping runs every job as accounts.default.
  const atStart = await checkAccountsAtStart({
    mapping: config.mapping,
    sessionsDir: configured.sessions,
    sessionsDefault: config.sessions.root === undefined,
    stateDir: config.stateDir,
    defaultAccount: config.accounts.default,
    shared: config.accounts.shared,
    resolver: accounts,
    warn: (msg, obj) => log.warn(obj, msg),
  });
  const L =
    atStart.sessionsDir === configured.sessions ? configured : stateLayout(config.stateDir, atStart.sessionsDir);
  // On a root service, whatever reaches the batch system without a mapped account runs
  // as the default account (with a mapping, every allowed caller is mapped; this covers
  // a job stored by an earlier version): never as root.
  const defaultAccount = atStart.jobAccounts.kind === 'self' ? undefined : config.accounts.default;
  const jobAccounts = describeJobAccounts(atStart.jobAccounts);
  log.info({ jobAccounts, sessions: L.sessions }, 'jobs run as');
  const { host, port } = listenParts(config.listen);
  // GLUE2 ids and the printed URL: the configured name, else the listen address as given.
  const publicHost = config.cluster.hostname ?? defaultPublicHost(host);
  const urlHost = publicHost.includes(':') ? `[${publicHost}]` : publicHost;

  // TLS credentials and trust: the CA directory is followed while the service runs, the
  // host certificate and key are read again on SIGHUP (trust-watch.ts).
  let hostFiles: { cert: string; key: string };
  let caDir: string;
  let pkiDir: string;
  let devIssuer: DevIssuer | undefined;
  if (config.tls.hostCert !== undefined && config.tls.hostKey !== undefined && config.tls.caDir !== undefined) {
    hostFiles = { cert: config.tls.hostCert, key: config.tls.hostKey };
    caDir = pkiDir = config.tls.caDir;
  } else {
    const pki = await ensureDevPki(
      L.pki,
      config.cluster.hostname !== undefined ? { hostname: config.cluster.hostname } : {},
    );
    hostFiles = { cert: pki.files.hostCert, key: pki.files.hostKey };
    caDir = pki.files.certificatesDir;
    pkiDir = pki.dir;
    if (config.tokens.devIssuer) devIssuer = await ensureDevIssuer(pki.dir);
  }
  let hostCreds;
  let liveTrust;
  try {
    hostCreds = readHostCredentials(hostFiles.cert, hostFiles.key);
    liveTrust = new LiveTrustStore(caDir, { log, crlRecheckMs: config.tls.crlRecheckSeconds * 1000 });
  } catch (e) {
    if (e instanceof PkiError) throw new StartError(e.message, { cause: e });
    throw e;
  }
  // Parts that keep a store for the service's life get the view, which answers from the current one.
  const trust = liveTrust.view;
  for (const p of trust.problems) log.warn({ file: p.file, reason: p.reason }, 'CA directory entry skipped');

  let db;
  makePrivateFile(L.db);
  try {
    db = openDatabase(L.db);
  } catch (e) {
    if (e instanceof SchemaTooNewError) throw new StartError(e.message, { cause: e });
    throw e;
  }
  setStateModes(L); // again: the database files exist now
  // The job index is filled while the service already serves (job-store.ts).
  const store = new JobStore(db, { index: 'later' });
  const control = new ControlDir(L.control);
  const events = createEvents({ config, db, log });
  let actualPort = port;
  const origin = (): string => `https://${urlHost}:${actualPort}`;
  const serviceUrl = (): string => config.publicUrl ?? `${origin()}${config.mountPoint}`;
  // The URL the info document publishes, which the ARC client takes as the base of its
  // job ids: the configured one, else the origin the client addressed (a validated Host),
  // so jobs submitted to https://127.0.0.1/... get ids the user's later calls match.
  const endpointUrl = (addressed?: string): string =>
    config.publicUrl ??
    (config.cluster.hostname === undefined && addressed !== undefined
      ? `${addressed}${config.mountPoint}`
      : serviceUrl());

  const delegations = createDelegations({ config, db, dir: L.delegations, log, trust });
  // Session directories are made on a job's first use, owned by its mapped account.
  const sessionOwner = sessionOwnerFor(accounts, (obj, msg) => log.warn(obj, msg));
  const sessions = await SessionDirs.open(L.sessions, sessionRecords(store, sessionOwner));
  const ops = createOperations({ db, store, control, log, serviceUrl });
  const monitoring = await createMonitoring({
    config,
    log,
    db,
    store,
    paths: { sessions: L.sessions, state: L.root },
    backend: () => engine.backend(),
  });
  // The host pair in use: the one read at start until the trust watch below exists.
  let hostNow = (): HostCredentials => hostCreds;
  const apel = createApel({
    config,
    db,
    log,
    metrics: monitoring.metrics,
    hostname: publicHost,
    // The signer reads the files at each message; the messaging client's TLS takes the pair
    // the listener took at the last SIGHUP, and the CA directory as it is now.
    host: { certFile: hostFiles.cert, keyFile: hostFiles.key, current: () => hostNow() },
    caPems: () => trust.pems,
  });
  const engine = createEngine({
    config,
    store,
    control,
    log,
    layout: L,
    delegations,
    sessions,
    serviceUrl,
    accounts,
    defaultAccount,
    observe: monitoring.engineObservers(),
    onEnded: ops.onEnded,
  });
  const schemes = await schemesProbe;
  const jobs = new JobService({
    store,
    descriptions: descriptionPort(
      config,
      (queue) => engine.queueLimits(queue),
      (scheme) => schemes.pathFor(scheme) !== undefined,
      // s3:// only to configured endpoints, open to the caller's groups (the site's keys).
      s3UrlRefusal(config.staging.gfal2.s3Endpoints),
    ),
    delegations: delegations.port,
    engine: engine.port,
    sessions,
    maxInstances: config.jobs.maxInstances,
    maxRerun: config.engine.maxReruns,
    get maxActivePerUser() {
      return config.jobs.maxActiveJobsPerUser; // reloadable
    },
    // The state machine's new job, in the vocabulary's names (ACCEPTED, REST ACCEPTING).
    initialState: { state: initialState(0).state, restState: restState(initialState(0)) },
    draining: ops.draining,
    routes: () => config.routes, // reloadable
    onSubmitted: (owner, results) => monitoring.submitted(owner, results),
  });
  // Why a job waits, from the engine's counters read once per answer (src/jobs/wait-reason.ts).
  const waitReasons = (): ((j: JobRecord) => string | undefined) => {
    const counts = engine.waitCounts();
    return (j) => (counts === undefined ? undefined : waitReason(j, config, counts));
  };
  const activity = {
    hostname: publicHost,
    proxyExpiry: (id: string) => delegations.expiry(id),
    waitReasons,
  };
  const actions = new JobActions(store, engine.port, () => activityWriter(activity));
  const files = new SessionFiles({
    control,
    engine: engine.port,
    jobExists: (id) => store.has(id),
    maxFileBytes: config.sessions.maxFileBytes,
    maxUploadBytesPerJob: config.sessions.maxUploadBytesPerJob,
  });
  let namesOf: TrustStore | undefined;
  let names: readonly string[] = [];
  const trustedCas = (): readonly string[] => {
    if (namesOf !== liveTrust.current) names = (namesOf = liveTrust.current).anchors.map((a) => a.subjectOneline);
    return names;
  };
  const info = createInfoSource({
    config,
    store,
    endpointUrl,
    hostname: publicHost,
    sessionSpace: () => sessions.space(),
    lrms: engine.lrmsInfo,
    cluster: () => engine.clusterInfo(),
    get trustedCas() {
      return trustedCas(); // the CA directory is followed: published as it is now
    },
    startTime: new Date(),
    drainedQueues: ops.drainedQueues,
  });

  const tokens = createTokenAuth({ config, log, caPems: () => trust.pems, serviceUrl, devIssuer });
  // Rebuilt on every reload (grid-mapfiles re-read, new queues); requests use the current one.
  let auth = createAuth(config, db, log, tokens, defaultAccount);
  const callerTokens = new CallerTokenDelegations(delegations.service);
  const streams = eventStreams({
    feed: events.feed,
    restStates: REST_STATES,
    limits: () => config.events, // reloadable
    maxIds: config.jobs.maxIdsPerRequest,
    maxBuffered: config.events.streamBufferBytes,
    // The stream's request asked again as a request would be: the current authorizer
    // (rebuilt by a reload), the connection's identity as CRLs and CAs say now.
    recheck: async (raw) => {
      const r = await auth.authenticate(raw);
      if (!r.ok) return undefined;
      try {
        return auth.authorize(raw, r.caller, 'read');
      } catch {
        return undefined;
      }
    },
  });
  monitoring.metrics.gaugeAtScrape('ceres_event_streams_open', 'Job event streams open now', [], (set) =>
    set({}, streams.count()),
  );
  const routes = guardDiskSpace(
    {
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
        callerDelegation: async (c) => (c.token === undefined ? undefined : callerTokens.delegationFor(c.token)),
        streams,
        changedSince: (owner, after, max, monitor) => events.feed.changedSince(owner, after, max, monitor),
      }),
      session: sessionResource({ jobs, sessions, files, maxListingEntries: config.jobs.maxListingEntries }),
      diagnose: diagnoseResource({
        jobs,
        control,
        render: diagnoseItemRenderer({
          rawDescription: (id) => store.rawDescription(id),
          serviceUrl,
          activity,
          controlFile: async (id, name) => (await control.read(id, name))?.toString('utf8'),
        }),
      }),
      delegations: delegations.collection,
      delegation: delegations.item,
    },
    () => monitoring.disk.low(),
  );

  const app = buildApp({
    mountPoint: config.mountPoint,
    routes,
    authenticate: (req) => auth.authenticate(req),
    authorize: (req, caller, operation) => auth.authorize(req, caller, operation),
    logger: log,
    origin,
    publicUrl: config.publicUrl,
    fairness: {
      maxRequestsPerIdentity: config.http.maxRequestsPerIdentity,
      keyOf: (req) => connectionKey(req.socket as TLSSocket),
    },
    fastify: {
      https: {
        ...tlsServerOptions({ certPem: hostCreds.certPem, keyPem: hostCreds.keyPem, caPems: trust.pems }),
        handshakeTimeout: config.tls.handshakeTimeoutSeconds * 1000,
      },
      keepAliveTimeout: config.http.keepAliveTimeoutSeconds * 1000,
      requestTimeout: config.http.requestTimeoutSeconds * 1000,
      // Not an idle cut-off for the whole connection: a long computation (a 100 MiB
      // submission) must get its answer; idle keep-alive sockets close by keepAliveTimeout.
      connectionTimeout: 0,
    },
  });
  // A graceful close waits for answers in progress: open event streams end first, with a reason.
  app.addHook('preClose', (done) => {
    streams.endAll();
    done();
  });
  if (monitoring.recording)
    instrumentHttp(app, monitoring.metrics, { restPrefix: `${config.mountPoint}/rest`, routes });
  healthRoutes(app, () => monitoring.readiness());
  app.addHook(
    'onRequest',
    bodyRateHook({
      minBytesPerSecond: config.http.minBodyBytesPerSecond,
      windowSeconds: config.http.bodyRateWindowSeconds,
    }),
  );
  // The site's load over time (the overview's pictures): a tick per 5-minute bucket.
  const series = new SiteSeries(db, Date.now, config.web.siteSeriesTickSeconds * 1000);
  wireWeb({
    app,
    mountPoint: config.mountPoint,
    authenticate: (req) => auth.authenticate(req),
    // The pages: the browser rule for VO members too (a browser never presents a proxy).
    authorize: (req, caller, operation) => auth.authorizeBrowser(req, caller, operation),
    db,
    store,
    control,
    jobs,
    actions,
    delegations: delegations.service,
    sessions,
    files,
    queues: () => config.cluster.queues.map((q) => q.name), // reloadable
    lrms: config.lrms.backend,
    maxUploadBytes: config.sessions.maxFileBytes,
    admins: config.web.admins,
    get maxDescriptionBytes() {
      return config.jobs.maxDescriptionBytes; // reloadable
    },
    maxInputBytes: config.sessions.maxUploadBytesPerJob,
    latestEvent: () => events.feed.latest(),
    waitReason: (j) => waitReasons()(j),
    info,
    series,
    figuresByVo: config.web.siteFiguresByVo,
    tickSeconds: config.web.siteSeriesTickSeconds,
  });
  const tlsServer = app.server as unknown as TlsServer;
  const voms = new VomsVerifier({ dir: config.vomsDir, hostnames: [publicHost], log });
  voms.refresh(Date.now()); // says at start-up whether VOMS attributes are verified
  attachPeerIdentity(tlsServer, () => liveTrust.current, { log, attributes: voms });
  const trustWatch = new TrustWatch({
    live: liveTrust,
    server: tlsServer,
    hostFiles,
    host: hostCreds,
    intervalMs: config.tls.crlRecheckSeconds * 1000,
    log,
    metrics: monitoring.metrics,
  });
  hostNow = () => trustWatch.host;
  monitoring.addCheck(trustWatch.readinessCheck());
  limitConnectionsPerIdentity(tlsServer, config.http.maxConnectionsPerIdentity, connectionKey, log);
  let indexFill: Promise<void> = Promise.resolve();
  const closeStores = async (): Promise<void> => {
    series.stop();
    store.stopIndexFill();
    await indexFill;
    await monitoring.stop();
    await delegations.close();
    await sessions.close();
    events.close();
    db.close();
  };
  try {
    await app.listen({ host, port });
  } catch (e) {
    await app.close().catch(() => undefined);
    await closeStores();
    throw listenError(host, port, e);
  }
  try {
    await monitoring.start();
  } catch (e) {
    await app.close().catch(() => undefined);
    await closeStores();
    const m = listenParts(config.metrics.listen ?? '');
    throw listenError(m.host, m.port, e);
  }
  series.start();
  const addr = app.server.address();
  if (addr && typeof addr === 'object') actualPort = addr.port;
  let ldif: LdifPublisher | undefined;
  try {
    // After listen: the published URL has the real port.
    const ldap = config.infosys.ldap;
    if (ldap.enabled)
      ldif = await startLdifPublisher({
        source: info,
        file: ldap.ldifFile,
        readerGroup: ldap.readerGroup,
        intervalMs: ldap.updateIntervalSeconds * 1000,
        log,
      });
    await engine.start();
    indexFill = store
      .fillIndexInSlices()
      .catch((e: unknown) => log.error({ err: e }, 'job index fill failed; status answers come from the database'));
    ops.catchUp();
    apel?.start();
    ops.startRequests({ actions, store, delegations: delegations.service });
    // Keys for delegation requests are made ahead from now on, one at a time in the
    // background: the first `action=new` after a start would otherwise wait for one.
    delegations.primeKeys();
  } catch (e) {
    ldif?.stop();
    await app.close().catch(() => undefined);
    await engine.stop().catch(() => undefined);
    await closeStores();
    throw e;
  }
  trustWatch.start();
  log.info(
    {
      url: serviceUrl(),
      pki: pkiDir,
      hostname: osHostname(),
      ...(devIssuer ? { devTokenIssuer: devIssuer.issuer } : {}),
      jobAccounts,
    },
    'service started',
  );
  // The C library's free memory given back when the memory outside V8's heap has grown and after
  // each full collection (malloc-trim.ts); the helper is compiled after serving starts.
  let trimPolicy: TrimPolicy | undefined;
  let stopped = false;
  void loadNativeMemory(L.native, config.lrms.fork.compiler, (why) =>
    log.info({ why }, 'native memory helper unavailable: memory freed by the C library stays with the service'),
  ).then((native) => {
    if (native === undefined || stopped) return;
    trimPolicy = startTrimPolicy({
      native,
      onTrimmed: (r) =>
        log.debug(
          {
            outsideHeapBeforeMiB: Math.round(r.beforeBytes / 1048576),
            outsideHeapAfterMiB: Math.round(r.afterBytes / 1048576),
            heldMiB: Math.round(r.heldBytes / 1048576),
            ms: Math.round(r.ms),
          },
          'free C memory given back',
        ),
    });
  });
  // One full collection after each burst, when the loop is quiet (heap-policy.ts).
  const heapPolicy = startHeapPolicy({
    onCollected: (r) => {
      log.debug(
        {
          heapBeforeMiB: Math.round(r.beforeBytes / 1048576),
          heapAfterMiB: Math.round(r.afterBytes / 1048576),
          ms: Math.round(r.ms),
        },
        r.kind === 'sustained'
          ? 'heap collected under sustained load'
          : r.kind === 'idle'
            ? 'heap collected at rest (young generation)'
            : 'heap collected after a burst',
      );
      // The collection freed the buffers of the burst; their memory goes back now.
      trimPolicy?.trim();
    },
  });
  sessions.sweepDebrisInBackground(startedAt, (r) =>
    r instanceof Error ? log.warn({ err: r }, 'upload debris sweep failed') : log.info(r, 'upload debris swept'),
  );

  const metricsPort = monitoring.listenerPort;
  return {
    url: serviceUrl(),
    pkiDir,
    devPki: caDir !== pkiDir,
    ...(devIssuer ? { devTokenIssuer: devIssuer.issuer } : {}),
    jobAccounts,
    port: actualPort,
    ...(metricsPort !== undefined
      ? {
          metricsUrl: `http://${listenParts(config.metrics.listen ?? '').host.replace(/^(.*:.*)$/, '[$1]')}:${metricsPort}/metrics`,
        }
      : {}),
    reload(load) {
      // The CA directory and the host certificate first: they do not depend on the
      // configuration file, which may be refused below.
      trustWatch.reload();
      let next: Config;
      try {
        next = load();
      } catch (e) {
        const refused = e instanceof Error ? e.message : String(e);
        monitoring.reloadRefused(refused);
        return { refused };
      }
      const plan = live.plan(next);
      // The new queues must still fit the running authorization section (its queue rules).
      const problem = checkAuthorizationConfig(plan.merged);
      if (problem !== undefined) {
        const refused = `config key '${problem.key}': ${problem.message} (the authorization section changes only with a restart)`;
        monitoring.reloadRefused(refused);
        return { refused };
      }
      // Routes are refused on what refuses a start (a name used twice, a queue condition
      // naming no queue); the names Slurm knows are not asked here (`config check` does).
      const bad = routeProblems(
        plan.merged.routes,
        plan.merged.cluster.queues.map((q) => q.name),
      ).find((p) => p.warning !== true);
      if (bad !== undefined) {
        const refused = `config key '${bad.key}': ${bad.message}`;
        monitoring.reloadRefused(refused);
        return { refused };
      }
      live.apply(plan);
      // Always rebuilt: a reload also re-reads the grid-mapfiles, changed or not.
      auth = createAuth(config, db, log, tokens, defaultAccount);
      voms.refresh(Date.now());
      streams.recheckAll(); // an authorization taken away ends the streams it allowed
      monitoring.disk.check();
      monitoring.reloaded(plan);
      return plan;
    },
    async close() {
      heapPolicy?.stop();
      trustWatch.stop();
      ldif?.stop();
      stopped = true;
      trimPolicy?.stop();
      await app.close();
      await apel?.stop();
      await ops.stop();
      await engine.stop();
      await closeStores();
      lock.release();
    },
  };
}
