/**
 * `ceres info ldif` at a large site: 100 queues (each with two VO shares, so 300 shares
 * and 300 MappingPolicies) and 10,000 jobs in the database. Measures the whole command
 * as an administrator or a cron job runs it (a new process: load, configuration,
 * database, rendering, output), and the in-process rendering the service repeats on
 * every LDIF update. Goal (issue 42): the command in under 1 s.
 *
 * Run after building: node <build>/bench/ldif.bench.js [--rounds N] [--queues N] [--jobs N]
 * Prints the median and the worst wall time over N rounds of each.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { emptyJobDescription } from '../src/vocabulary/job-description.js';
import { openDatabase } from '../src/store/database.js';
import { JobStore, type NewJob } from '../src/store/job-store.js';
import { buildInfoDocument } from '../src/info/info-document.js';
import { renderGlue2Ldif } from '../src/info/glue2-ldif.js';
import { tallyJobs } from '../src/info/job-tally.js';
import { median, numberArg } from './micro-args.js';

const rounds = numberArg('--rounds', 7);
const nQueues = numberArg('--queues', 100);
const nJobs = numberArg('--jobs', 10_000);
const MAIN = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const STATES = ['ACCEPTED', 'PREPARING', 'SUBMIT', 'INLRMS', 'FINISHING', 'FINISHED'] as const;

const root = mkdtempSync(join(tmpdir(), 'ceres-ldif-bench-'));
const queues = Array.from({ length: nQueues }, (_, i) => ({ name: `q${i}`, allow: ['atlas', 'cms'] }));
const config = {
  stateDir: root,
  cluster: { queues, runtimeEnvironments: [{ name: 'ENV/PROXY' }] },
  authorization: {
    groups: [
      { name: 'atlas', match: [{ voms: '/atlas' }] },
      { name: 'cms', match: [{ voms: '/cms' }] },
    ],
    allow: ['atlas', 'cms'],
  },
  infosys: { ldap: { enabled: true } },
};
const configFile = join(root, 'config.json');
writeFileSync(configFile, JSON.stringify(config));

const db = openDatabase(join(root, 'ceres.db'));
const store = new JobStore(db);
const now = Date.now();
const jobs: NewJob[] = [];
for (let i = 0; i < nJobs; i++)
  jobs.push({
    id: `bench${i.toString(36).padStart(8, '0')}`,
    owner: '/DC=org/DC=example/CN=Bench User',
    state: STATES[i % STATES.length]!,
    restState: 'ACCEPTING',
    queue: `q${i % nQueues}`,
    delegationId: null,
    delegationIds: [],
    format: 'xrsl',
    description: { ...emptyJobDescription('xrsl'), executable: '/bin/true' },
    raw: '&(executable=/bin/true)',
    createdAt: now,
    rerunsLeft: 0,
    clientHost: '192.0.2.7',
    localAccount: null,
    fqans: null,
  });
store.insertMany(jobs);
db.close();

function timed(fn: () => void): number {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}

// Wall time, and (with GNU time) the command's CPU time, which other load on this shared
// machine disturbs less.
const GNU_TIME = '/usr/bin/time';
let lines = 0;
const command: number[] = [];
const commandCpu: number[] = [];
for (let r = 0; r < rounds; r++) {
  const args = [MAIN, 'info', 'ldif', '--config', configFile];
  const withTime = existsSync(GNU_TIME);
  let stderr = '';
  command.push(
    timed(() => {
      const p = withTime
        ? spawnSync(GNU_TIME, ['-f', 'cpu %U %S', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 })
        : spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
      if (p.status !== 0) throw new Error(`ceres info ldif failed: ${p.stderr}`);
      lines = p.stdout.split('\n').length;
      stderr = p.stderr;
    }),
  );
  const cpu = /cpu ([0-9.]+) ([0-9.]+)/.exec(stderr);
  if (cpu) commandCpu.push((Number(cpu[1]) + Number(cpu[2])) * 1000);
}

// The rendering alone, from a snapshot of the same shape (what each service update costs).
const tally = tallyJobs(
  jobs.map((j) => ({ gmState: j.state, pending: false, queue: j.queue })) as Parameters<typeof tallyJobs>[0],
);
const snapshot = {
  endpointUrl: 'https://ce.example.org:8443/arex',
  hostname: 'ce.example.org',
  clusterName: 'bench',
  implementationVersion: '0',
  now: new Date(),
  validitySeconds: 60,
  health: { state: 'ok' as const },
  servingState: 'production' as const,
  queues: queues.map((q) => ({ name: q.name, vos: ['atlas', 'cms'] })),
  runtimeEnvironments: [{ name: 'ENV/PROXY' }],
  jobs: tally,
  lrms: { name: 'fork' },
  host: {},
  trustedCas: [],
  accessRules: ['vo:atlas', 'vo:cms'],
  ldap: { url: 'ldap://ce.example.org:2135/o=glue', port: 2135 },
};
let entries = 0;
const render: number[] = [];
for (let r = 0; r < rounds * 3; r++)
  render.push(
    timed(() => {
      entries = renderGlue2Ldif(buildInfoDocument(snapshot)).entries.length;
    }),
  );

rmSync(root, { recursive: true, force: true });
const ms = (xs: number[]): string => `median ${median(xs).toFixed(0)} ms, worst ${Math.max(...xs).toFixed(0)} ms`;
console.log(`${nQueues} queues, ${nJobs} jobs, ${entries} entries, ${lines} lines of LDIF`);
console.log(`ceres info ldif (new process): ${ms(command)} wall`);
if (commandCpu.length > 0) console.log(`                              ${ms(commandCpu)} CPU (user + system)`);
console.log(`rendering in process:          ${ms(render)}`);
