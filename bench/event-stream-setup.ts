/**
 * What the job event stream benchmarks share (event-stream-load.bench.ts,
 * event-stream-follow.bench.ts): the real service over real TLS with a store seeded with
 * jobs of token identities, the state changes made through the store, lean counting
 * stream readers, and the service's CPU time and resident memory from /proc.
 *
 * Seeding: the service is started once (it makes its PKI, the development token issuer
 * and the database), stopped, the jobs are inserted into its database as rows (the way
 * job-list-pages.ts fills a store: submitting 100,000 jobs through HTTP would cost more
 * than the measurement), and started again on it. The rows are ended jobs (internal
 * state FINISHED, so the engine has nothing to do with them) whose REST state reads
 * RUNNING: the one change each gets is RUNNING -> FINISHED with exit code 0, the shape of
 * the last event of every job that ends well.
 *
 * The changes: `JobStore.update`, the compare-and-set statement the engine runs for every
 * transition, on a second connection to the same database file from the bench process.
 * The event rows are written by the same triggers in the same statement, and the service's
 * one feed reads them as it reads its own. Real jobs on the fork backend drain at about 60
 * jobs/s with the whole machine (docs/performance.md) and make 5 to 6 changes each: 10,000
 * changes a minute would take half of the 2 cores beside the streams and their readers,
 * and the stream's share would be the small difference of two large, noisy figures. The
 * service does not see these changes in its memory (its status index keeps RUNNING),
 * which the stream never reads.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request, Agent } from 'undici';
import { openDatabase, type Db } from '../src/store/database.js';
import { JobStore } from '../src/store/job-store.js';
import { newJobId } from '../src/jobs/job-id.js';
import { ensureDevIssuer, issueDevToken } from '../src/auth/token/dev-issuer.js';
import { startCeres, stopCeres, tempDir, type RunningCeres } from '../test/helpers/service.js';
import { parseVmRssKiB } from './harness/proc.js';
import { eventsSection } from '../src/config/sections/events.js';

/**
 * Limits lifted so one identity (or one address: token clients have no DN) may hold every
 * stream; `fastPoll`: the safety-net poll at 5 ms (or at that many ms), for changes made from outside (a build
 * from before the wake-up polled every 5 ms anyway, and has no such key).
 */
export function streamConfig(streams: number, fastPoll: boolean | number): Record<string, unknown> {
  const hasFallback = 'fallbackPollMilliseconds' in eventsSection.events.properties;
  const ms = fastPoll === true ? 5 : fastPoll;
  return {
    cluster: { queues: [{ name: 'main' }] },
    http: { maxConnectionsPerIdentity: streams + 100, maxRequestsPerIdentity: streams + 100 },
    events: {
      maxStreamsPerIdentity: streams + 100,
      ...(ms !== false && hasFallback ? { fallbackPollMilliseconds: ms } : {}),
    },
  };
}

export interface Seeded {
  readonly ceres: RunningCeres;
  readonly dir: string;
  readonly issuer: string;
  /** Job ids by token subject. */
  readonly jobs: ReadonlyMap<string, readonly string[]>;
  /** A second connection to the service's database (the change driver's). */
  readonly db: Db;
  readonly store: JobStore;
  /** A token of `sub` (compute.read, valid for two hours). */
  token(sub: string): Promise<string>;
  stop(): Promise<void>;
}

/** The service with `perSubject` jobs for each subject, all reading RUNNING. */
export async function seededService(
  subjects: readonly string[],
  perSubject: number,
  config: Record<string, unknown>,
  nodeArgs: readonly string[] = [],
): Promise<Seeded> {
  const dir = tempDir('stream-load');
  const first = await startCeres({ stateDir: dir, config });
  const pkiDir = first.pkiDir;
  const { issuer } = await ensureDevIssuer(pkiDir);
  await stopCeres(first);
  const jobs = new Map<string, string[]>();
  const fill = openDatabase(join(dir, 'ceres.db'));
  const ins = fill.prepare(
    `INSERT INTO jobs (id, owner, owner_dn, name, state, rest_state, queue, format, description, raw, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'FINISHED', 'RUNNING', 'main', 'xrsl', '{}', 'x', ?, ?)`,
  );
  const now = Date.now();
  fill.transaction(() => {
    for (const sub of subjects) {
      const ids: string[] = [];
      for (let i = 0; i < perSubject; i++) {
        const id = newJobId();
        ins.run(id, `${issuer}#${sub}`, sub, `job-${i}`, now, now);
        ids.push(id);
      }
      jobs.set(sub, ids);
    }
  })();
  fill.pragma('wal_checkpoint(TRUNCATE)');
  fill.close();
  // CERES_BENCH_PROF_DIR: the measured service writes a CPU profile there (where the time goes).
  const prof = process.env.CERES_BENCH_PROF_DIR;
  const profArgs = prof !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
  const ceres = await startCeres({ stateDir: dir, config, nodeArgs: [...profArgs, ...nodeArgs] });
  const db = openDatabase(join(dir, 'ceres.db'));
  const store = new JobStore(db);
  return {
    ceres,
    dir,
    issuer,
    jobs,
    db,
    store,
    token: (sub) => issueDevToken(pkiDir, { sub, scope: 'compute.read', lifetimeSeconds: 7200 }),
    stop: async () => {
      db.close();
      await stopCeres(ceres);
    },
  };
}

export { finish, flip, drive } from './event-stream-changes.js';

/** A stream reader that only counts what it gets (lean: the point is the service's cost). */
export interface CountingStream {
  readonly status: number;
  /** `event: state` blocks received. */
  readonly states: number;
  /** `event: end` blocks (the service ended the stream: slow-reader, ...). */
  readonly ends: number;
  /** The last `id:` seen (the resume point). */
  readonly lastId: string | undefined;
  close(): void;
}

const STATE = 'event: state\n';
const END = 'event: end\n';

function occurrences(s: string, what: string): number {
  let n = 0;
  for (let i = s.indexOf(what); i >= 0; i = s.indexOf(what, i + what.length)) n++;
  return n;
}

/** Opens `url` with Accept: text/event-stream; resolves once the answer's head is in. */
export async function countingStream(
  agent: Agent,
  url: string,
  headers: Record<string, string>,
  keepLastId = false,
): Promise<CountingStream> {
  const ac = new AbortController();
  const r = await request(url, {
    dispatcher: agent,
    headers: { accept: 'text/event-stream', ...headers },
    signal: ac.signal,
  });
  const s = {
    status: r.statusCode,
    states: 0,
    ends: 0,
    lastId: undefined as string | undefined,
    close: () => ac.abort(),
  };
  if (r.statusCode !== 200) {
    await r.body.text();
    return s;
  }
  // A block split between two chunks: the carry holds a tail shorter than what is counted.
  let carry = '';
  r.body.setEncoding('utf8');
  r.body.on('data', (chunk: string) => {
    const t = carry + chunk;
    s.states += occurrences(t, STATE);
    s.ends += occurrences(t, END);
    if (keepLastId) {
      const i = t.lastIndexOf('\nid: ') >= 0 ? t.lastIndexOf('\nid: ') + 1 : t.startsWith('id: ') ? 0 : -1;
      if (i >= 0 && t.indexOf('\n', i) > 0) s.lastId = t.slice(i + 4, t.indexOf('\n', i));
    }
    carry = t.slice(-(STATE.length - 1));
  });
  r.body.on('error', () => {});
  return s;
}

/**
 * The service's CPU time in µs: the scheduler's run time of each of its threads
 * (/proc/PID/task/TID/schedstat, in ns), which counts exactly where utime + stime count
 * 10 ms ticks. A thread that ended is no longer counted (the service's threads live as
 * long as it does: the main thread, libuv's pool, V8's workers).
 */
export function serviceCpuUs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1000;
}

/** The service's CPU µs per second over the next `seconds`. */
export async function cpuRate(pid: number, seconds: number): Promise<number> {
  const c0 = serviceCpuUs(pid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return (serviceCpuUs(pid) - c0) / seconds;
}

/**
 * Waits until the service's start-up work is done (its CPU under `maxUsPerS` per second,
 * 2 % by default, over `seconds`, at most 30 tries): an idle figure taken right after the
 * start counts the start (with 100,000 jobs, the status index fills in slices after it).
 */
export async function settle(pid: number, maxUsPerS = 20_000, seconds = 2): Promise<void> {
  for (let i = 0; i < 30 && (await cpuRate(pid, seconds)) > maxUsPerS; i++);
}

/** The service's resident memory in MiB. */
export function serviceRssMiB(pid: number): number {
  const kib = parseVmRssKiB(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (kib === undefined) throw new Error(`no VmRSS for ${pid}`);
  return Math.round(kib / 102.4) / 10;
}

/** Waits until `ok()` or `ms` pass; returns whether it held. */
export async function until(ok: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

/** The machine's load averages (1, 5, 15 min), as figures are reported beside. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** A client agent for the service's CA, no client certificate (the streams send tokens). */
export function tokenAgent(ceres: RunningCeres, connections?: number): Agent {
  return new Agent({
    connect: { ca: readFileSync(join(ceres.pkiDir, 'ca.pem'), 'utf8') },
    ...(connections !== undefined ? { connections } : {}),
  });
}

/** `node --import` of the in-service change driver (event-stream-driver.ts). */
export const DRIVER_ARGS: readonly string[] = ['--import', new URL('./event-stream-driver.js', import.meta.url).href];

/** The in-service driver of the service whose state folder is `dir` (started with DRIVER_ARGS). */
export async function serviceDriver(dir: string): Promise<{
  drive(ids: readonly string[], ms: number, tickMs?: number): Promise<{ changed: number; driverCpuUs: number }>;
}> {
  const portFile = join(dir, 'bench-driver.port');
  const d = {
    drive: async (ids: readonly string[], ms: number, tickMs?: number) => {
      const port = readFileSync(portFile, 'utf8');
      const r = await request(`http://127.0.0.1:${port}/drive`, {
        method: 'POST',
        body: JSON.stringify({ ids, ms, ...(tickMs !== undefined ? { tickMs } : {}) }),
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      const text = await r.body.text();
      if (r.statusCode !== 200) throw new Error(`driver: ${text}`);
      return JSON.parse(text) as { changed: number; driverCpuUs: number };
    },
  };
  await d.drive([], 0);
  return d;
}
