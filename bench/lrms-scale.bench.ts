/**
 * The batch backends at scale (issue 47, item 4; docs/performance.md, "Batch systems at
 * scale"): tens of thousands of jobs in one Slurm or one Grid Engine, driven through the
 * backend adapter directly (as the conformance suite does), not the REST service: filling
 * 20,000 jobs through the service would add its own stages and not fit a 15-minute run.
 *
 * For each step of `--steps` (jobs held in the batch system, tracked by the backend):
 *  - submission: the jobs up to the step submitted through backend.submit (at most
 *    `--in-flight` at once; the backend's runner bounds its commands at `--concurrency`):
 *    jobs/s, the submission command's own wall time (the backend's command observer), and
 *    the benchmark process's CPU per job (Ceres's share: files of the attempt, the runner);
 *  - polling, over `--polls` poll intervals with nothing else going on: the status
 *    commands run (counted by shims in the backend's binDir, ./lrms-scale/command-shims.ts)
 *    per interval and every other command run; the status command's wall and CPU (GNU
 *    time); the process's CPU per poll (reading the answer, parsing it, updating the job
 *    table); and the parser alone on a real answer;
 *  - latency, with all of them present: sample jobs in the queue that runs, each ending
 *    (its status file's time → the backend's final update) and cancelled (cancel() → the
 *    final update), against 2 poll intervals.
 * The filler jobs wait for ever in a queue that starts nothing (./lrms-scale/clusters.ts).
 *
 * Needs root and the batch system (scripts/slurm-dev.sh, scripts/gridengine-dev.sh). After
 * building:
 *   node dist/bench/lrms-scale.bench.js --system slurm|gridengine [--steps 1000,5000,20000]
 *     [--poll-ms 1000[,2000...]] [--polls 10] [--samples 8] [--concurrency 4] [--in-flight 64]
 *     [--port 7600] [--json FILE] [--via-path]
 * Several `--poll-ms`: at each step, polling and latency are measured once per interval on
 * the same jobs, each by a new backend that recovers the jobs of the one before (as after a
 * restart): one fill of 20,000 jobs serves both.
 * `--baseline DIST`: each interval is measured twice, first with the backend of the compiled
 * tree DIST (an earlier commit's `dist`), then with this one's, on the same jobs
 * (`--baseline-last`: this one's first, against a load that drifts during the run).
 * `--trace` (Grid Engine): where each sample end's time goes: the wrapper's end (its status
 * file), the controller dropping the job (a `qstat -j ID` of its own every 100 ms), the start
 * and end of the poll's status command that no longer listed it, and the final update.
 * `--via-path` (Grid Engine): its commands from PATH, through Debian's per-call wrapper, as the
 * backend ran them before it looked in $SGE_ROOT/bin/<arch> (src/lrms/gridengine/command-dir.ts).
 */
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { BatchBackend, BatchJobRef, BatchJobSpec } from '../src/lrms/backend.js';
import { killProcessesUnder, removeDir, tempDir } from '../test/helpers/service.js';
import { median, percentile } from './harness/stats.js';
import { startGridEngine, startSlurm, type ScaleCluster } from './lrms-scale/clusters.js';

const { values } = parseArgs({
  options: {
    system: { type: 'string', default: 'slurm' },
    steps: { type: 'string', default: '1000,5000,20000' },
    'poll-ms': { type: 'string', default: '1000' },
    polls: { type: 'string', default: '10' },
    samples: { type: 'string', default: '8' },
    concurrency: { type: 'string', default: '4' },
    'in-flight': { type: 'string', default: '64' },
    port: { type: 'string' },
    json: { type: 'string' },
    'via-path': { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    baseline: { type: 'string' },
    'baseline-last': { type: 'boolean', default: false },
  },
});
const STEPS = values.steps.split(',').map(Number);
const POLL_LIST = values['poll-ms'].split(',').map(Number);
let POLL_MS = POLL_LIST[0] as number;
const POLLS = Number(values.polls);
const SAMPLES = Number(values.samples);
const CONCURRENCY = Number(values.concurrency);
const IN_FLIGHT = Number(values['in-flight']);
/** Jobs the run queue starts at once (Slurm's 8 CPUs, Grid Engine's all.q 4 slots): samples go in rounds of this. */
const ROUND = 4;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const r1 = (x: number): number => Math.round(x * 10) / 10;

const work = tempDir('lrms-scale');
let cluster: ScaleCluster;
try {
  cluster =
    values.system === 'gridengine'
      ? await startGridEngine(work, Number(values.port ?? 7610), values['via-path'])
      : startSlurm(work, Number(values.port ?? 7600), Math.max(...STEPS));
} catch (e) {
  // The dev scripts stop what they started when a start fails; the folder goes too.
  removeDir(work);
  throw e;
}

/** When each job's updates came (by local id). */
const seen = new Map<string, { running?: number; final?: number; state?: string }>();
const submitWalls: number[] = [];
/** When each status command began and ended (the backend's command observer; `--trace`). */
const statusRuns: { start: number; end: number }[] = [];
let backend: BatchBackend | undefined;

let n = 0;
async function spec(queue: string, seconds: number): Promise<BatchJobSpec> {
  const i = ++n;
  const sessionDir = join(work, 'sessions', String(i));
  await mkdir(sessionDir, { recursive: true });
  return {
    jobId: `scale${i}`,
    sessionDir,
    lrmsDir: join(work, 'lrms', String(i)),
    executable: '/bin/sleep',
    arguments: [String(seconds)],
    environment: [],
    runtimeEnvironments: [],
    limits: { wallTimeSeconds: 3000 },
    slots: 1,
    queue,
  };
}

async function waitFor(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** Submit `count` filler jobs; jobs/s and where the time went. */
async function fill(count: number): Promise<object> {
  const walls0 = submitWalls.length;
  const cpu0 = cpuMs();
  const t0 = performance.now();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      await backend?.submit(await spec(cluster.holdQueue, 3600));
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, count) }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const walls = submitWalls.slice(walls0);
  return {
    jobs: count,
    seconds: r1(seconds),
    jobsPerSecond: r1(count / seconds),
    [`${cluster.submitCommand}WallMsMedian`]: r1(median(walls)),
    [`${cluster.submitCommand}WallMsP90`]: r1(percentile(walls, 90)),
    // What the concurrency bound allows with the submission command's median wall time.
    boundByCommandsPerSecond: r1((CONCURRENCY * 1000) / median(walls)),
    ceresCpuMsPerJob: r1((cpuMs() - cpu0) / count),
  };
}

/** `POLLS` intervals with nothing else going on: the commands run and what each poll cost. */
async function measurePolls(): Promise<object> {
  // One whole pass first, so that the window starts between passes.
  await sleep(POLL_MS * 2);
  const mark = cluster.shims.mark();
  const cpu0 = cpuMs();
  const t0 = performance.now();
  await sleep(POLL_MS * POLLS);
  const wallS = (performance.now() - t0) / 1000;
  const cpu = cpuMs() - cpu0;
  const runs = cluster.shims.since(mark);
  const status = runs.filter((r) => r.command === cluster.statusCommand);
  const others = runs.filter((r) => r.command !== cluster.statusCommand).map((r) => r.command);
  const answer = cluster.statusAnswer();
  const parseMs: number[] = [];
  const parseCpuMs: number[] = [];
  let listed = 0;
  for (let i = 0; i < 7; i++) {
    // CPU as well as wall: on a loaded machine the wall time is mostly the wait for a core.
    const c0 = cpuMs();
    const p0 = performance.now();
    listed = cluster.parse(answer);
    parseMs.push(performance.now() - p0);
    parseCpuMs.push(cpuMs() - c0);
  }
  const polls = Math.max(1, status.length);
  return {
    intervals: r1((wallS * 1000) / POLL_MS),
    statusCommands: status.length,
    statusCommandsPerInterval: r1(status.length / ((wallS * 1000) / POLL_MS)),
    otherCommands: others,
    statusWallMsMedian: r1(median(status.map((r) => r.wallS * 1000))),
    statusCpuMsMedian: r1(median(status.map((r) => r.cpuS * 1000))),
    // GNU time counts CPU in 10 ms steps: the mean over the window resolves less.
    statusCpuMsMean: r1((status.reduce((a, r) => a + r.cpuS, 0) * 1000) / polls),
    answerBytes: answer.length,
    jobsListed: listed,
    parseMsMedian: r1(median(parseMs)),
    parseCpuMsMedian: r1(median(parseCpuMs)),
    ceresCpuMsPerPoll: r1(cpu / polls),
  };
}

/** Sample jobs ending and cancelled while the filler is present: the latency of each to its final update. */
/** When the controller no longer lists `localId` (asked every 100 ms from now; NaN: not traced). */
async function droppedAt(localId: string): Promise<number> {
  if (!values.trace || cluster.listed === undefined) return Number.NaN;
  for (;;) {
    const t = Date.now();
    if (!(await cluster.listed(localId))) return t;
    await sleep(100);
  }
}

/**
 * An end's time in stages: the wrapper's end → the controller dropping the job → the start
 * of the status command that decided (the last to end before the final update) → its end
 * → the final update.
 */
function stages(wrapperEnd: number, dropped: number, final: number): Record<string, number> {
  const deciding = statusRuns.filter((r) => r.end <= final).at(-1);
  if (deciding === undefined || Number.isNaN(dropped)) return {};
  return {
    controllerLagMs: Math.round(dropped - wrapperEnd),
    waitForPollMs: Math.round(deciding.start - dropped),
    statusCommandMs: Math.round(deciding.end - deciding.start),
    ceresMs: Math.round(final - deciding.end),
    // The start of the pass before it: how far apart the two began.
    passGapMs: Math.round(deciding.start - (statusRuns[statusRuns.indexOf(deciding) - 1]?.start ?? Number.NaN)),
  };
}

async function measureLatency(): Promise<object> {
  const traces: Record<string, number>[] = [];
  const ends: number[] = [];
  const cancels: number[] = [];
  const starts: number[] = [];
  for (let done = 0; done < SAMPLES; done += ROUND) {
    // Ending: sleep 2 s; the end is the status file the job wrapper writes.
    const specs = await Promise.all(Array.from({ length: ROUND }, () => spec(cluster.runQueue, 2)));
    const t0 = Date.now();
    const b = backend as BatchBackend;
    const ids = await Promise.all(specs.map((s) => b.submit(s)));
    // One traced job a round: each look is a command, and the machine is small.
    const drops = Promise.all(ids.map((id, i) => (i === 0 ? droppedAt(id) : Promise.resolve(Number.NaN))));
    await waitFor('sample ends', () => ids.every((id) => seen.get(id)?.final !== undefined), 120_000);
    const dropped = await drops;
    for (const [i, id] of ids.entries()) {
      const end = (await stat(join((specs[i] as BatchJobSpec).lrmsDir, 'status'))).mtimeMs;
      ends.push((seen.get(id)?.final ?? 0) - end);
      if (!Number.isNaN(dropped[i] ?? Number.NaN))
        traces.push(stages(end, dropped[i] as number, seen.get(id)?.final ?? 0));
      starts.push((seen.get(id)?.running ?? Number.NaN) - t0);
    }
    // Cancelled while running.
    const long = await Promise.all(Array.from({ length: ROUND }, () => spec(cluster.runQueue, 3600)));
    const lids = await Promise.all(long.map((s) => b.submit(s)));
    await waitFor('samples running', () => lids.every((id) => seen.get(id)?.running !== undefined), 120_000);
    const c0 = Date.now();
    await Promise.all(lids.map((id) => b.cancel(id)));
    await waitFor('cancels', () => lids.every((id) => seen.get(id)?.final !== undefined), 120_000);
    for (const id of lids) cancels.push((seen.get(id)?.final ?? 0) - c0);
  }
  const summary = (xs: number[]): object => ({
    medianMs: Math.round(median(xs)),
    maxMs: Math.round(Math.max(...xs)),
    over2Intervals: xs.filter((x) => x > 2 * POLL_MS).length,
  });
  return {
    samples: ends.length,
    endToFinal: summary(ends),
    cancelToFinal: summary(cancels),
    submitToRunning: summary(starts.filter((x) => !Number.isNaN(x))),
    ...(values.trace ? { endStages: traces } : {}),
  };
}

const result: Record<string, unknown> = {
  system: cluster.name,
  viaPath: values['via-path'],
  pollIntervalMs: POLL_LIST,
  concurrency: CONCURRENCY,
  load: (await import('node:os')).loadavg().map(r1),
  steps: [] as object[],
};
/** The jobs submitted so far (the filler and the samples), for the next backend to recover. */
const refs: BatchJobRef[] = [];

/** A backend polling every `pollMs`, taking over the jobs of the one before (closed first). */
async function newBackend(pollMs: number, from?: string): Promise<BatchBackend> {
  await backend?.close();
  const b = await cluster.backend({
    from,
    workDir: join(work, 'backend'),
    pollIntervalMs: pollMs,
    maxConcurrentCommands: CONCURRENCY,
    commands: {
      observe: (command, seconds) => {
        if (command === cluster.submitCommand) submitWalls.push(seconds * 1000);
        if (command === cluster.statusCommand && values.trace) {
          const end = Date.now();
          statusRuns.push({ start: end - seconds * 1000, end });
        }
      },
    },
  });
  b.onUpdate((localId, u) => {
    const s = seen.get(localId) ?? {};
    if (u.kind === 'final') s.final = Date.now();
    else {
      s.state = u.state;
      if (u.state === 'RUNNING' && s.running === undefined) s.running = Date.now();
    }
    seen.set(localId, s);
  });
  const submit = b.submit.bind(b);
  b.submit = async (spec) => {
    const localId = await submit(spec);
    refs.push({ jobId: spec.jobId, localId, sessionDir: spec.sessionDir, lrmsDir: spec.lrmsDir });
    return localId;
  };
  if (refs.length > 0) await b.recover(refs.filter((r) => seen.get(r.localId)?.final === undefined));
  POLL_MS = pollMs;
  return b;
}

try {
  let have = 0;
  for (const step of STEPS) {
    backend = await newBackend(POLL_LIST[0] as number);
    const submission = await fill(step - have);
    have = step;
    const pair = (pollMs: number): { pollMs: number; from?: string }[] =>
      values.baseline === undefined
        ? [{ pollMs }]
        : values['baseline-last']
          ? [{ pollMs }, { pollMs, from: values.baseline }]
          : [{ pollMs, from: values.baseline }, { pollMs }];
    const phases = POLL_LIST.flatMap(pair);
    for (const [i, { pollMs, from }] of phases.entries()) {
      backend = await newBackend(pollMs, from);
      const polling = await measurePolls();
      const latency = await measureLatency();
      const row = {
        jobs: step,
        pollIntervalMs: pollMs,
        baseline: from !== undefined,
        ...(i === 0 ? { submission } : {}),
        polling,
        latency,
        load: (await import('node:os')).loadavg().map(r1),
      };
      (result.steps as object[]).push(row);
      console.log(JSON.stringify(row));
    }
  }
} finally {
  await backend?.close();
  cluster.stop();
  killProcessesUnder(work);
  removeDir(work);
}
if (values.json) await writeFile(values.json, `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result, null, 2));
