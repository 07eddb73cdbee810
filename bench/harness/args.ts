/**
 * Command lines of `npm run bench` and `npm run bench:compare`, parsed into plain
 * option objects (no I/O here: files named on the command line are read later, so a
 * missing file gets a message of its own).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { BenchError } from './failures.js';

/** In the order a run executes them (see scenarios/index.ts for why this order). */
export const SCENARIO_NAMES = [
  'status',
  'info',
  'mixed-load',
  'bulk-submit',
  'concurrent-submit',
  'latency',
  'drain',
  'transfer',
  'delegation',
  'list-jobs',
  'memory',
] as const;
/**
 * Scenarios that run only when named (`--scenario soak`): `all` and the default leave
 * them out, because they take ten minutes or more on their own.
 */
export const OPT_IN_SCENARIOS = ['soak'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number] | (typeof OPT_IN_SCENARIOS)[number];

/**
 * What fills the big store: trivial jobs killed right after submission (they end at
 * once and stay still), or parked jobs (waiting in PREPARING for an upload that never
 * comes). See scenarios/job-supply.ts for why both exist.
 */
export type StoreKind = 'killed' | 'parked';

export interface Counts {
  /** bulk-submit: jobs per POST, and how many POSTs (the median is reported). */
  bulkJobs: number;
  bulkRuns: number;
  /** concurrent-submit: single-job POSTs in total, and concurrent clients. */
  concurrentJobs: number;
  concurrentClients: number;
  /** status / info: ids per call, calls (the median is reported), and untimed calls before them. */
  actionIds: number;
  actionRuns: number;
  actionWarmups: number;
  /** list-jobs / memory: jobs in the store, their kind, GET jobs repeats, the state filter used. */
  storeJobs: number;
  storeKind: StoreKind;
  listRuns: number;
  stateFilter: string;
  /** latency: jobs (staggered), milliseconds between submissions. */
  latencyJobs: number;
  latencyGapMs: number;
  /** drain: jobs submitted at once. */
  drainJobs: number;
  /** transfer: file size and repeats. */
  transferMiB: number;
  transferRuns: number;
  /** mixed-load: duration and clients. */
  mixedSeconds: number;
  mixedClients: number;
  /** delegation: action=new requests, milliseconds between them. */
  delegationRequests: number;
  delegationGapMs: number;
  /** soak: clients, seconds of mixed work, seconds of warm-up before the first RSS figure. */
  soakClients: number;
  soakSeconds: number;
  soakWarmupS: number;
}

export function defaultCounts(quick: boolean): Counts {
  return quick
    ? {
        bulkJobs: 1000,
        bulkRuns: 1,
        concurrentJobs: 200,
        concurrentClients: 64,
        actionIds: 1000,
        actionRuns: 20,
        actionWarmups: 50,
        storeJobs: 10_000,
        storeKind: 'killed',
        listRuns: 3,
        stateFilter: 'RUNNING',
        latencyJobs: 20,
        latencyGapMs: 200,
        drainJobs: 200,
        transferMiB: 256,
        transferRuns: 1,
        mixedSeconds: 15,
        mixedClients: 64,
        delegationRequests: 10,
        delegationGapMs: 500,
        soakClients: 64,
        soakSeconds: 120,
        soakWarmupS: 30,
      }
    : {
        bulkJobs: 1000,
        bulkRuns: 5,
        concurrentJobs: 1000,
        concurrentClients: 64,
        actionIds: 1000,
        actionRuns: 100,
        actionWarmups: 200,
        storeJobs: 100_000,
        storeKind: 'killed',
        listRuns: 5,
        stateFilter: 'RUNNING',
        latencyJobs: 100,
        latencyGapMs: 200,
        drainJobs: 1000,
        transferMiB: 1024,
        transferRuns: 3,
        mixedSeconds: 60,
        mixedClients: 64,
        delegationRequests: 30,
        delegationGapMs: 500,
        soakClients: 64,
        soakSeconds: 600,
        soakWarmupS: 60,
      };
}

export interface CommonOptions {
  scenarios: ScenarioName[];
  quick: boolean;
  counts: Counts;
  /** Seconds one scenario may take on one endpoint before it stops and is marked. */
  budgetS: number;
  /** Longest wait for a quiet machine before each measurement (0: do not wait). */
  quietWaitS: number;
  format: 'xrsl' | 'adl';
  cleanup: boolean;
  json?: string | undefined;
}

export interface BenchOptions extends CommonOptions {
  endpoint: string;
  cert: string;
  key: string;
  ca: string;
  pids?: number[] | undefined;
  label?: string | undefined;
}

export interface CompareOptions extends CommonOptions {
  withArex: boolean;
  arexEndpoint: string;
  arexCert: string;
  arexKey: string;
  arexCa: string;
  arexSetup?: string | undefined;
  /** Per-endpoint overrides for A-REX, whose job turnaround is minutes. */
  arexCounts: Partial<Counts>;
  outDir: string;
  ceresConfig?: string | undefined;
}

export type Parsed<T> = { help: true } | { help: false; options: T };

const COUNT_FLAGS: Record<string, keyof Counts> = {
  'bulk-jobs': 'bulkJobs',
  'bulk-runs': 'bulkRuns',
  'concurrent-jobs': 'concurrentJobs',
  clients: 'concurrentClients',
  'action-ids': 'actionIds',
  'action-runs': 'actionRuns',
  'action-warmups': 'actionWarmups',
  'store-jobs': 'storeJobs',
  'list-runs': 'listRuns',
  'latency-jobs': 'latencyJobs',
  'latency-gap-ms': 'latencyGapMs',
  'drain-jobs': 'drainJobs',
  'transfer-mib': 'transferMiB',
  'transfer-runs': 'transferRuns',
  'mixed-seconds': 'mixedSeconds',
  'mixed-clients': 'mixedClients',
  'delegation-requests': 'delegationRequests',
  'delegation-gap-ms': 'delegationGapMs',
  'soak-clients': 'soakClients',
  'soak-seconds': 'soakSeconds',
  'soak-warmup': 'soakWarmupS',
};

const COMMON: NonNullable<ParseArgsConfig['options']> = {
  help: { type: 'boolean', short: 'h' },
  scenario: { type: 'string', multiple: true },
  quick: { type: 'boolean' },
  json: { type: 'string' },
  budget: { type: 'string' },
  'quiet-wait': { type: 'string' },
  format: { type: 'string' },
  'state-filter': { type: 'string' },
  'store-kind': { type: 'string' },
  'no-cleanup': { type: 'boolean' },
  ...Object.fromEntries(Object.keys(COUNT_FLAGS).map((k) => [k, { type: 'string' as const }])),
};

function run(argv: readonly string[], options: NonNullable<ParseArgsConfig['options']>) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false });
  } catch (e) {
    // parseArgs messages are already precise ("Unknown option '--foo'"); drop its code prefix.
    throw new BenchError('usage', e instanceof Error ? e.message.replace(/^TypeError \[[A-Z_]+\]: /, '') : String(e));
  }
}

/** A positive integer (or 0 when allowed). */
export function intArg(name: string, v: string, min = 1): number {
  if (!/^\d{1,12}$/.test(v.replace(/_/g, '')))
    throw new BenchError('usage', `--${name} needs a whole number, not '${v}'`);
  const n = Number(v.replace(/_/g, ''));
  if (n < min) throw new BenchError('usage', `--${name} must be at least ${min}`);
  return n;
}

export function storeKindArg(name: string, v: string): StoreKind {
  if (v !== 'killed' && v !== 'parked') throw new BenchError('usage', `--${name} is killed or parked, not '${v}'`);
  return v;
}

export function parseScenarios(values: readonly string[] | undefined): ScenarioName[] {
  if (values === undefined || values.length === 0) return [...SCENARIO_NAMES];
  const wanted = new Set<string>();
  for (const v of values) for (const s of v.split(',')) if (s.trim() !== '') wanted.add(s.trim());
  for (const s of wanted) {
    if (s === 'all') return [...SCENARIO_NAMES];
    if (![...SCENARIO_NAMES, ...OPT_IN_SCENARIOS].includes(s as ScenarioName))
      throw new BenchError(
        'usage',
        `unknown scenario '${s}' (known: ${[...SCENARIO_NAMES, ...OPT_IN_SCENARIOS].join(', ')}, all)`,
      );
  }
  return [...SCENARIO_NAMES, ...OPT_IN_SCENARIOS].filter((s) => wanted.has(s));
}

/** https URL of a service (the mount point), without a trailing slash. */
export function endpointArg(name: string, v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new BenchError('usage', `--${name} is not a URL: '${v}'`);
  }
  if (u.protocol !== 'https:')
    throw new BenchError(
      'usage',
      `--${name} must be an https:// URL (the ARC REST service URL, e.g. https://127.0.0.1:8443/arex)`,
    );
  if (u.search !== '' || u.hash !== '') throw new BenchError('usage', `--${name} must not have a query or fragment`);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/rest(\/\d+\.\d+)?$/, '');
  return `${u.origin}${path}`;
}

function common(values: Record<string, unknown>): CommonOptions {
  const quick = values.quick === true;
  const counts = defaultCounts(quick);
  for (const [flag, key] of Object.entries(COUNT_FLAGS)) {
    const v = values[flag];
    if (typeof v === 'string')
      (counts[key] as number) = intArg(
        flag,
        v,
        key === 'latencyGapMs' || key === 'delegationGapMs' || key === 'soakWarmupS' || key === 'actionWarmups' ? 0 : 1,
      );
  }
  if (typeof values['state-filter'] === 'string') {
    const f = values['state-filter'].trim();
    if (!/^[A-Z]+(,[A-Z]+)*$/.test(f))
      throw new BenchError('usage', `--state-filter takes REST state names separated by commas, e.g. FINISHED,FAILED`);
    counts.stateFilter = f;
  }
  if (typeof values['store-kind'] === 'string') counts.storeKind = storeKindArg('store-kind', values['store-kind']);
  const format = typeof values.format === 'string' ? values.format : 'xrsl';
  if (format !== 'xrsl' && format !== 'adl') throw new BenchError('usage', `--format is xrsl or adl, not '${format}'`);
  return {
    scenarios: parseScenarios(values.scenario as string[] | undefined),
    quick,
    counts,
    budgetS: typeof values.budget === 'string' ? intArg('budget', values.budget) : quick ? 300 : 900,
    quietWaitS:
      typeof values['quiet-wait'] === 'string' ? intArg('quiet-wait', values['quiet-wait'], 0) : quick ? 10 : 30,
    format,
    cleanup: values['no-cleanup'] !== true,
    json: typeof values.json === 'string' ? values.json : undefined,
  };
}

export function parseBenchArgs(argv: readonly string[]): Parsed<BenchOptions> {
  const { values } = run(argv, {
    ...COMMON,
    endpoint: { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    ca: { type: 'string' },
    pid: { type: 'string' },
    label: { type: 'string' },
  });
  if (values.help === true) return { help: true };
  const need = (n: string): string => {
    const v = values[n];
    if (typeof v !== 'string' || v === '') throw new BenchError('usage', `--${n} is required (see --help)`);
    return v;
  };
  const endpoint = endpointArg('endpoint', need('endpoint'));
  const cert = need('cert');
  const pids = typeof values.pid === 'string' ? values.pid.split(',').map((p) => intArg('pid', p.trim())) : undefined;
  return {
    help: false,
    options: {
      ...common(values),
      endpoint,
      cert,
      // A proxy file holds certificate and key together: --key defaults to --cert.
      key: typeof values.key === 'string' && values.key !== '' ? values.key : cert,
      ca: need('ca'),
      pids,
      label: typeof values.label === 'string' ? values.label : undefined,
    },
  };
}

/** Where the reference A-REX keeps its test PKI (written by its setup script). */
export const AREX_PKI = '/etc/grid-security/anchor-pki';
export const AREX_DEFAULT_ENDPOINT = 'https://127.0.0.1:8444/arex';

export function parseCompareArgs(argv: readonly string[]): Parsed<CompareOptions> {
  const { values } = run(argv, {
    ...COMMON,
    'with-arex': { type: 'boolean' },
    'arex-endpoint': { type: 'string' },
    'arex-cert': { type: 'string' },
    'arex-key': { type: 'string' },
    'arex-ca': { type: 'string' },
    'arex-setup': { type: 'string' },
    'arex-drain-jobs': { type: 'string' },
    'arex-latency-jobs': { type: 'string' },
    'arex-store-jobs': { type: 'string' },
    'arex-store-kind': { type: 'string' },
    'out-dir': { type: 'string' },
    'ceres-config': { type: 'string' },
  });
  if (values.help === true) return { help: true };
  const c = common(values);
  const quick = c.quick;
  const arexCounts: Partial<Counts> = {
    // A-REX takes ~1 minute per job turnaround and ~0.5 s per job to drain: fewer jobs,
    // compared per job.
    drainJobs:
      typeof values['arex-drain-jobs'] === 'string'
        ? intArg('arex-drain-jobs', values['arex-drain-jobs'])
        : quick
          ? 50
          : 100,
    // A-REX takes about a minute per 1,000 kills on this machine, but parked jobs cost it
    // nothing once accepted; the store there is made of parked jobs.
    storeKind:
      typeof values['arex-store-kind'] === 'string'
        ? storeKindArg('arex-store-kind', values['arex-store-kind'])
        : 'parked',
  };
  if (typeof values['arex-latency-jobs'] === 'string')
    arexCounts.latencyJobs = intArg('arex-latency-jobs', values['arex-latency-jobs']);
  // Filling A-REX with 100,000 jobs takes minutes, but cleaning them up afterwards keeps it
  // busy for hours (it works through the kills at ~15-30 jobs/s here); a full run gives it
  // 20,000 and compares per listed job.
  arexCounts.storeJobs =
    typeof values['arex-store-jobs'] === 'string'
      ? intArg('arex-store-jobs', values['arex-store-jobs'])
      : Math.min(c.counts.storeJobs, 20_000);
  const arexCert = typeof values['arex-cert'] === 'string' ? values['arex-cert'] : `${AREX_PKI}/userproxy.pem`;
  return {
    help: false,
    options: {
      ...c,
      withArex: values['with-arex'] === true,
      arexEndpoint: endpointArg(
        'arex-endpoint',
        typeof values['arex-endpoint'] === 'string' ? values['arex-endpoint'] : AREX_DEFAULT_ENDPOINT,
      ),
      arexCert,
      arexKey: typeof values['arex-key'] === 'string' ? values['arex-key'] : arexCert,
      arexCa: typeof values['arex-ca'] === 'string' ? values['arex-ca'] : `${AREX_PKI}/ca.pem`,
      arexSetup: typeof values['arex-setup'] === 'string' ? values['arex-setup'] : process.env.AREX_SETUP || undefined,
      arexCounts,
      outDir: typeof values['out-dir'] === 'string' ? values['out-dir'] : 'bench/results',
      ceresConfig: typeof values['ceres-config'] === 'string' ? values['ceres-config'] : undefined,
    },
  };
}

export const BENCH_USAGE = `usage: npm run bench -- --endpoint URL --cert FILE [--key FILE] --ca FILE [options]

Measures one ARC REST endpoint (URL = the service URL, e.g. https://127.0.0.1:8443/arex).
The interface version (1.1 or 1.0) is taken from GET URL/rest.

  --cert FILE         client certificate (PEM); a proxy file holding cert, key and chain works
  --key FILE          private key (PEM); defaults to --cert
  --ca FILE           CA certificate(s) that signed the server certificate (PEM)
  --scenario NAMES    comma-separated, repeatable; default all: ${SCENARIO_NAMES.join(', ')};
                      run only when named: ${OPT_IN_SCENARIOS.join(', ')} (64 clients for 10 minutes: --soak-clients, --soak-seconds)
  --quick             smaller counts and shorter runs (about 10 minutes on a fast endpoint)
  --json FILE         write the results as JSON
  --pid N[,N...]      server process id(s) for RSS and CPU (default: the process listening on the port)
  --label NAME        name of the endpoint in the output
  --budget S          seconds one scenario may take before it stops and is marked (default 900, quick 300)
  --quiet-wait S      longest wait for a quiet machine before each measurement (default 30, quick 10; 0 = no wait)
  --format xrsl|adl   job description language (default xrsl)
  --state-filter S    states for the filtered GET jobs (default RUNNING: matches none of the stored jobs)
  --store-kind K      what fills the big store: killed (default) or parked jobs
  --no-cleanup        leave the jobs created on the endpoint
  counts: ${Object.keys(COUNT_FLAGS)
    .map((k) => `--${k} N`)
    .join(', ')}
`;

export const COMPARE_USAGE = `usage: npm run bench:compare -- [options]

Starts Ceres (built in dist/) on a free loopback port with a fresh state directory, and
measures it and the reference A-REX side by side when A-REX answers (default
${AREX_DEFAULT_ENDPOINT}). Writes bench/results/<date>-<commit>.{md,json}.

  --with-arex         require A-REX; start it with --arex-setup (or $AREX_SETUP) if it does not answer
  --arex-endpoint URL A-REX service URL (default ${AREX_DEFAULT_ENDPOINT})
  --arex-cert/--arex-key/--arex-ca FILE   A-REX credentials (default ${AREX_PKI}/userproxy.pem, ca.pem)
  --arex-setup FILE   the anchor's setup.sh (run with AREX_PORT set from --arex-endpoint)
  --arex-drain-jobs N jobs A-REX drains (default 100, quick 50); the per-job figure is compared
  --arex-store-jobs N jobs in A-REX's big store (default 20,000; quick 10,000)
  --arex-store-kind K the A-REX store's jobs: parked (default) or killed
  --arex-latency-jobs N  latency jobs for A-REX (default as for Ceres)
  --out-dir DIR       where results go (default bench/results)
  --ceres-config FILE configuration file for the Ceres under test
  plus --scenario, --quick, --budget, --quiet-wait, --format, --state-filter, --no-cleanup and the counts of npm run bench
`;
