/**
 * The layer rules of docs/architecture.md, checked on every `npm test`
 * (`npm run check:layers`). An arrow may run down the layers or sideways within one,
 * never up:
 *
 *   transport src/http  ·  REST src/api
 *   domain services src/jobs src/jobdesc src/sessions src/delegations src/info src/authz
 *     src/admin src/accounting
 *   job engine src/engine
 *   adapters src/lrms src/staging src/store src/accounts src/messaging
 *   leaves: src/vocabulary src/errors src/doc src/config src/fs src/pki src/auth
 *   observers: src/metrics src/health (wired by the root, served by src/http and src/api)
 *
 * The composition root (src/service) is above them all and only the command line
 * (src/cli) starts it. The command line's REST client (src/client, `ceres trace`) is a client
 * of a CE, outside the service: it builds on the leaves only, and only the command line uses it.
 * Beside the root, src/process keeps the service process's housekeeping
 * (memory, logging, the state directory's layout, modes and lock): the root and the
 * command line use it; it uses the adapters and the leaves at most. No rule has an exception by file name: what a lower layer needs
 * from a higher one (the job description model, delegation types, the authorization
 * section's load-time checks) lives in the lower one.
 */
const ABOVE_DOMAIN = '^src/(http|api|service|process|cli)/';
const ABOVE_ENGINE =
  '^src/(http|api|service|process|cli|jobs|jobdesc|sessions|delegations|info|authz|admin|accounting)/';
const ABOVE_ADAPTERS =
  '^src/(http|api|service|process|cli|jobs|jobdesc|sessions|delegations|info|authz|admin|accounting|engine)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'Modules depend on each other in one direction only.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'composition-root-on-top',
      comment: 'Only the command line reaches the composition root (src/service); nothing below it imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(service|cli)/' },
      to: { path: '^src/service/' },
    },
    {
      name: 'process-housekeeping-for-the-root',
      comment:
        "The service process's housekeeping (src/process) is the root's and the command line's; nothing below them imports it.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(service|cli|process)/' },
      to: { path: '^src/process/' },
    },
    {
      name: 'process-housekeeping-not-up',
      comment:
        'Process housekeeping uses the adapters and the leaves; it does not know the services, the engine or the root.',
      severity: 'error',
      from: { path: '^src/process/' },
      to: { path: '^src/(http|api|service|cli|jobs|jobdesc|sessions|delegations|info|authz|admin|accounting|engine)/' },
    },
    {
      name: 'transport-below-rest',
      comment: 'The transport toolkit (src/http) serves the REST application; it does not know it.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(api|service|process|cli)/' },
    },
    {
      name: 'domain-knows-no-http',
      comment: 'Domain services take a caller and plain values; only src/http and src/api speak HTTP.',
      severity: 'error',
      from: { path: '^src/(jobs|jobdesc|sessions|delegations|info|authz|admin|accounting)/' },
      to: { path: ABOVE_DOMAIN },
    },
    {
      name: 'engine-not-up',
      comment: 'The engine is driven by the domain services and wired by the root; it never imports them.',
      severity: 'error',
      from: { path: '^src/engine/' },
      to: { path: ABOVE_ENGINE },
    },
    {
      name: 'adapters-not-up',
      comment:
        'Batch backends, data staging, the store, local accounts and the messaging client serve the engine and the services; they import neither.',
      severity: 'error',
      from: { path: '^src/(lrms|staging|store|accounts|messaging)/' },
      to: { path: ABOVE_ADAPTERS },
    },
    {
      name: 'backends-apart',
      comment:
        'A batch backend (src/lrms/<name>/: fork, slurm, gridengine, kubernetes, ...) builds on the shared core (src/lrms/core) and src/lrms/*.ts, never on another backend: what two backends share moves into the core.',
      severity: 'error',
      from: { path: '^src/lrms/([^/]+)/', pathNot: '^src/lrms/core/' },
      to: { path: '^src/lrms/[^/]+/', pathNot: ['^src/lrms/$1/', '^src/lrms/core/'] },
    },
    {
      name: 'lrms-core-knows-no-backend',
      comment: 'The shared core of the batch backends (src/lrms/core) serves every backend and imports none.',
      severity: 'error',
      from: { path: '^src/lrms/core/' },
      to: { path: '^src/lrms/[^/]+/', pathNot: '^src/lrms/core/' },
    },
    {
      name: 'leaves-import-no-layer',
      comment:
        'The vocabulary, errors, documents, configuration schema, safe file access, PKI and authentication sit under every layer.',
      severity: 'error',
      from: { path: '^src/(vocabulary|errors|doc|config|fs|pki|auth)/' },
      to: {
        path: '^src/(http|api|service|process|cli|jobs|jobdesc|sessions|delegations|info|authz|engine|lrms|staging|store|accounts|messaging)/',
      },
    },
    {
      name: 'observers-below-the-service',
      comment:
        'Metrics and health observe the adapters through their types and hooks; they import no domain service, engine, REST or root module.',
      severity: 'error',
      from: { path: '^src/(metrics|health)/' },
      to: { path: '^src/(http|api|service|process|cli|jobs|jobdesc|sessions|delegations|info|authz|engine)/' },
    },
    {
      name: 'observed-not-observing',
      comment:
        'Layers below the root offer hooks (onTransition, onResult, a command observer) and never import the metrics or health modules; only the root and the HTTP layers serving them do.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(service|cli|http|api|metrics|health)/' },
      to: { path: '^src/(metrics|health)/' },
    },
    {
      name: 'vocabulary-is-a-leaf',
      comment: 'The job-state vocabulary imports nothing, so every layer may use it.',
      severity: 'error',
      from: { path: '^src/vocabulary/' },
      to: { path: '^src/', pathNot: '^src/vocabulary/' },
    },
    {
      name: 'client-outside-the-service',
      comment:
        "The REST client of `ceres trace` (src/client) is a client of a CE, like arcsub: it uses the leaves (PKI, authentication's VOMS reading) and none of the service's layers.",
      severity: 'error',
      from: { path: '^src/client/' },
      to: {
        path: '^src/(http|api|service|process|cli|jobs|jobdesc|sessions|delegations|info|authz|admin|accounting|engine|lrms|staging|store|accounts|messaging|metrics|health)/',
      },
    },
    {
      name: 'client-for-the-command-line',
      comment: 'Only the command line uses the REST client (src/client); the service never calls a CE.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(client|cli)/' },
      to: { path: '^src/client/' },
    },
    {
      name: 'fastify-only-in-http-and-api',
      comment: 'The web framework stays in the transport and REST layers.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http|api)/' },
      to: { path: '(^|/)node_modules/fastify/' },
    },
    {
      name: 'state-machine-pure',
      comment: 'The state machine decides; it does no I/O: it and its state types import no Node module.',
      severity: 'error',
      from: { path: '^src/engine/(state-machine|states)\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'processes-only-in-lrms-and-accounts',
      comment:
        "Only the batch backends start processes, and local accounts (getent/id, a pool account's cleanup), the messaging adapter (openssl smime -sign) and data staging's gfal2 helper (src/staging/gfal2); src/admin/backup.ts runs tar, the one exception, named.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(lrms|accounts|messaging|staging/gfal2)/|^src/admin/backup\\.ts$' },
      to: { dependencyTypes: ['core'], path: '^(node:)?child_process$' },
    },
    {
      name: 'http-server-only-in-http-and-api',
      comment:
        "Requests and responses (node:http) are the transport's and the REST layer's; data staging and the messaging client (accounting to APEL) are HTTPS clients.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http|api|service|staging|messaging)/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?https?$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
      extensions: ['.ts', '.js', '.mjs', '.cjs'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
