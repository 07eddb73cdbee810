/**
 * The layer rules of docs/architecture.md, checked on every `npm test`
 * (`npm run check:layers`). An arrow may run down the layers or sideways within one,
 * never up:
 *
 *   transport src/http  ·  REST src/api
 *   domain services src/jobs src/jobdesc src/sessions src/delegations src/info src/authz
 *     src/admin src/accounting
 *   job engine src/engine
 *   adapters src/lrms src/staging src/store src/accounts
 *   leaves: src/vocabulary src/errors src/doc src/config src/fs src/pki src/auth
 *   observers: src/metrics src/health (wired by the root, served by src/http and src/api)
 *
 * The composition root (src/service) is above them all and only the command line
 * (src/cli) starts it.
 */
const ABOVE_DOMAIN = '^src/(http|api|service|cli)/';
const ABOVE_ENGINE = '^src/(http|api|service|cli|jobs|jobdesc|sessions|delegations|info|authz|admin|accounting)/';
const ABOVE_ADAPTERS =
  '^src/(http|api|service|cli|jobs|jobdesc|sessions|delegations|info|authz|admin|accounting|engine)/';

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
      name: 'transport-below-rest',
      comment: 'The transport toolkit (src/http) serves the REST application; it does not know it.',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(api|service|cli)/' },
    },
    {
      name: 'domain-knows-no-http',
      comment: 'Domain services take a caller and plain values; only src/http and src/api speak HTTP.',
      severity: 'error',
      from: { path: '^src/(jobs|jobdesc|sessions|delegations|info|authz)/' },
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
        'Batch backends, data staging, the store and local accounts serve the engine and the services; they import neither.',
      severity: 'error',
      from: { path: '^src/(lrms|staging|store|accounts)/' },
      // The store keeps what the domain defines (a job's description, a delegation's type).
      to: { path: ABOVE_ADAPTERS, pathNot: '^src/(jobdesc/model|delegations/types)\\.ts$' },
    },
    {
      name: 'leaves-import-no-layer',
      comment:
        'The vocabulary, errors, documents, configuration schema, safe file access, PKI and authentication sit under every layer.',
      severity: 'error',
      from: { path: '^src/(vocabulary|errors|doc|config|fs|pki|auth)/' },
      // Loading the configuration runs the authorization section's own checks (group
      // references, FQAN patterns): those two modules import only the schema.
      to: {
        path: '^src/(http|api|service|cli|jobs|jobdesc|sessions|delegations|info|authz|engine|lrms|staging|store|accounts)/',
        pathNot: '^src/authz/(config-check|fqan)\\.ts$',
      },
    },
    {
      name: 'observers-below-the-service',
      comment:
        'Metrics and health observe the adapters through their types and hooks; they import no domain service, engine, REST or root module.',
      severity: 'error',
      from: { path: '^src/(metrics|health)/' },
      to: { path: '^src/(http|api|service|cli|jobs|jobdesc|sessions|delegations|info|authz|engine)/' },
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
      name: 'fastify-only-in-http-and-api',
      comment: 'The web framework stays in the transport and REST layers.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http|api)/' },
      to: { path: '(^|/)node_modules/fastify/' },
    },
    {
      name: 'http-server-only-in-http-and-api',
      comment:
        "Requests and responses (node:http) are the transport's and the REST layer's; data staging is an HTTP client and may use its status names.",
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http|api|service|staging)/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?https?$' },
    },
    {
      name: 'processes-only-in-adapters',
      comment:
        'Processes are started by the batch backends, local accounts, the backup tool and the gfal2 transfer helper of data staging (src/staging/gfal2) only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(lrms|accounts|admin|staging/gfal2)/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?child_process$' },
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
