/**
 * Bulk submission in process: `JobService.submit` of N trivial jobs in one body (xRSL
 * `+(&...)(&...)` or ADL `<ActivityDescriptions>`), with the real parts the service uses
 * (description parser and acceptance checks, SQLite store with its durable commit, the
 * drain table), without HTTP, TLS or the engine. Session directories are made on a job's
 * first use (src/sessions/session-dirs.ts), not by the submission: an older build run
 * with this file makes them here. Reports the
 * process CPU time (user + system) and wall time per POST, medians, so two builds can be
 * compared by running this file from each (`node <build>/bench/submit.bench.js`),
 * alternating.
 *
 *   node dist/bench/submit.bench.js [--jobs 100] [--posts 30] [--format xrsl|adl] [--dir DIR] [--keep]
 *
 * `--dir` is where the state goes (default: the system's temporary folder); it is removed
 * at the end unless `--keep` is given.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildConfig } from '../src/config/load.js';
import { descriptionPort } from '../src/jobs/description-port.js';
import { JobService } from '../src/jobs/job-service.js';
import { openDatabase } from '../src/store/database.js';
import { JobStore } from '../src/store/job-store.js';
import { SessionDirs } from '../src/sessions/session-dirs.js';
import { Drains } from '../src/admin/drains.js';
import { bulkBody } from './harness/job-bodies.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100' },
    posts: { type: 'string', default: '30' },
    format: { type: 'string', default: 'xrsl' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const n = Number(values.jobs);
const posts = Number(values.posts);
const format = values.format === 'adl' ? 'adl' : 'xrsl';

const root = await mkdtemp(join(values.dir ?? tmpdir(), 'ceres-submit-bench-'));
await mkdir(join(root, 'sessions'));
const sessions = await SessionDirs.open(join(root, 'sessions'));
const db = openDatabase(join(root, 'ceres.db'));
const store = new JobStore(db);
const drains = new Drains(db);
const jobs = new JobService({
  store,
  descriptions: descriptionPort(buildConfig({ cluster: { queues: [{ name: 'main' }] } })),
  delegations: { ownedBy: () => true },
  engine: { jobsSubmitted: () => undefined, jobPoked: () => undefined },
  sessions,
  maxInstances: 10,
  maxRerun: 5,
  initialState: { state: 'ACCEPTED', restState: 'ACCEPTING' },
  draining: (queue) => drains.refusal(queue),
});

const cpu: number[] = [];
const wall: number[] = [];
try {
  for (let i = -3; i < posts; i++) {
    const body = Buffer.from(bulkBody(format, 'trivial', n, `b${i}`));
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const results = await jobs.submit('/DC=org/DC=example/CN=Bench', body, {});
    const t = performance.now() - t0;
    const c = process.cpuUsage(c0);
    if (results.filter((r) => r.status === 201).length !== n) throw new Error(`POST ${i}: not all ${n} jobs created`);
    if (i < 0) continue; // warm-up
    cpu.push((c.user + c.system) / 1000);
    wall.push(t);
  }
} finally {
  await sessions.close();
  db.close();
  // Deleting thousands of directories slows making new ones on ext4 for minutes
  // (docs/performance.md): when comparing builds, --keep and delete after the last run.
  if (values.keep) console.error(`state left in ${root}`);
  else await rm(root, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
console.log(
  `${format} ${n} jobs per POST, ${posts} POSTs: CPU ${median(cpu).toFixed(2)} ms, wall ${median(wall).toFixed(2)} ms per POST (medians)`,
);
