/**
 * root:// staging through gfal2 against a bare xrdcp, same server, same run (not in the
 * suite): a 1 GiB download into a session (goal: at most 1.25x xrdcp), and 100 small
 * files of one job (goal: at most 2x one xrdcp run copying the same 100 files).
 * Needs root, xrootd-server, xrootd-client and python3-gfal2.
 *   node dist/bench/gfal2-xrootd.bench.js [--mib 1024] [--files 100] [--rounds 5] [--spares 1] [--sized]
 * `--sized`: the small files' job declares each file's size (xRSL `size.checksum`, an
 * input's `size`), as a job that knows its inputs does; without it, no size is declared.
 * `--spares`: staging.gfal2.spareHelpers (0: every job starts its own helper).
 * The small files are timed `rounds` times, alternating xrdcp and Ceres, and the medians
 * compared (one run of each is noise on a shared machine); the time to the first file
 * done (mostly the gfal2 helper's start) and this process's CPU per job (the service's
 * side of the staging) are printed apart.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, truncate, writeFile, chown } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Stager } from '../src/staging/stager.js';
import { anonymousCredentials } from '../src/staging/credentials.js';
import { stagingConfig } from '../test/staging/helpers/fixtures.js';
import { XrootdServer } from '../test/staging/helpers/xrootd.js';

const { values } = parseArgs({
  options: {
    mib: { type: 'string', default: '1024' },
    files: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    spares: { type: 'string', default: '1' },
    sized: { type: 'boolean', default: false },
  },
});
const mib = Number(values.mib);
const count = Number(values.files);
const rounds = Number(values.rounds);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const never = new AbortController().signal;

const xrd = await XrootdServer.start();
const work = await mkdtemp(join(tmpdir(), 'ceres-gfal2-bench-'));
try {
  const big = xrd.path('big.bin');
  await writeFile(big, '');
  await truncate(big, mib * 1024 * 1024);
  const owner = spawnSync('id', ['-u', 'xrootd']).stdout.toString().trim();
  await chown(big, Number(owner), Number(spawnSync('id', ['-g', 'xrootd']).stdout.toString().trim()));
  for (let i = 0; i < count; i++) await xrd.put(`s${i}.bin`, randomBytes(10_000));

  const time = async (fn: () => unknown): Promise<number> => {
    const t = process.hrtime.bigint();
    await fn();
    return Number(process.hrtime.bigint() - t) / 1e9;
  };
  const xrdcp = (args: string[]): void => {
    const r = spawnSync('xrdcp', ['-s', '-f', ...args]);
    if (r.status !== 0) throw new Error(`xrdcp: ${r.stderr.toString()}`);
  };
  const stager = new Stager({
    config: stagingConfig({ maxTransfersPerJob: 4, gfal2: { spareHelpers: Number(values.spares) } }),
    credentials: anonymousCredentials,
  });
  let n = 0;
  let firstDone: number[] = [];
  const stageIn = async (files: { name: string; source: string; size?: number }[]): Promise<void> => {
    const sessionDir = join(work, `s${n++}`);
    await mkdir(sessionDir);
    const t0 = process.hrtime.bigint();
    let first: number | undefined;
    const r = await stager.stageIn(
      { id: `b${n}`, owner: '/CN=bench', sessionDir, files: files.map((f) => ({ ...f, executable: false })) },
      never,
      () => (first ??= Number(process.hrtime.bigint() - t0) / 1e9),
    );
    if (!r.ok) throw new Error(r.failureReason);
    if (first !== undefined) firstDone.push(first);
  };
  // The spare for the next job starts as a job's transfers end: its start is timed by
  // neither side (without this wait it would land in the next xrdcp run).
  // This process's CPU (the service's part: the stager, its file system calls through the
  // thread pool, the lines to and from the helper) per timed job, less nothing: the
  // benchmark's own work during a job is waiting.
  const cpu: number[] = [];
  const timeJob = async (fn: () => Promise<void>): Promise<number> => {
    const c = process.cpuUsage();
    const s = await time(fn);
    const used = process.cpuUsage(c);
    cpu.push((used.user + used.system) / 1000);
    await stager.spareHelpersLoaded();
    return s;
  };

  const bareBig = await time(() => xrdcp([xrd.url('big.bin'), join(work, 'big.xrdcp')]));
  const ceresBig = await timeJob(() => stageIn([{ name: 'big.bin', source: xrd.url('big.bin') }]));
  const urls = Array.from({ length: count }, (_, i) => xrd.url(`s${i}.bin`));
  const bareRuns: number[] = [];
  const ceresRuns: number[] = [];
  firstDone = [];
  cpu.length = 0;
  for (let round = 0; round < rounds; round++) {
    const into = join(work, `many${round}`);
    await mkdir(into);
    bareRuns.push(await time(() => xrdcp([...urls, into + '/'])));
    ceresRuns.push(
      await timeJob(() =>
        stageIn(urls.map((u, i) => ({ name: `s${i}.bin`, source: u, ...(values.sized ? { size: 10_000 } : {}) }))),
      ),
    );
  }
  const bareMany = median(bareRuns);
  const ceresMany = median(ceresRuns);
  const line = (what: string, bare: number, ceres: number, goal: number): string =>
    `${what}: xrdcp ${bare.toFixed(2)} s, Ceres ${ceres.toFixed(2)} s, ratio ${(ceres / bare).toFixed(2)} (goal <= ${goal})`;
  console.log(line(`${mib} MiB download`, bareBig, ceresBig, 1.25));
  console.log(line(`${count} small files (median of ${rounds})`, bareMany, ceresMany, 2));
  const list = (xs: number[]): string => xs.map((x) => x.toFixed(2)).join(' ');
  console.log(`  xrdcp runs: ${list(bareRuns)}; Ceres runs: ${list(ceresRuns)}`);
  console.log(`  Ceres, first file done after (helper start-up and one copy): ${list(firstDone)}`);
  console.log(
    `  Ceres, this process's CPU per job of ${count} files: median ${median(cpu).toFixed(1)} ms (${cpu.map((x) => x.toFixed(0)).join(' ')})`,
  );
  await stager.close();
} finally {
  await xrd.stop();
  await rm(work, { recursive: true, force: true });
}
