#!/usr/bin/env node
// Runs the compiled test suite with Node's built-in runner, several files at once.
// Usage: node scripts/run-tests.mjs [--no-interop] [--check] [--jobs N] [dir-or-file ...]
// Test files: dist/test/**/*.test.js. Interop tests (the real ARC client) live in
// dist/test/interop and are skipped with --no-interop.
//
// Each file runs in its own `node --test` process; up to N of them at once (--jobs, or
// CERES_TEST_JOBS; default twice the CPUs: most files wait on daemons, child processes and
// timers far more than they compute). A file's output is printed in one piece when it ends, with
// its duration. Files are independent: each makes its own state directory, listens on ports the
// kernel hands out, names its accounts at random and starts its own daemons (see CONTRIBUTING.md,
// "Tests side by side"). The few files listed in ALONE below run first, one at a time, with
// nothing beside them.
//
// The durations of the run are written to dist/test-durations.json; the next run starts the
// longest files first (so that the run does not end waiting for one long file started last), and
// `node scripts/slowest-tests.mjs` prints the slowest. Without earlier durations (a fresh
// clone) the files that start a service or daemons go first.
//
// `--check` (what `npm test` passes): `npm run check` (lint, format, layer rules) runs as the
// first job of the parallel part, beside the test files, and a failure of it fails the run like
// a failed file. It is about 100 s of one core (type-aware ESLint), which the whole run used to
// wait for before the first test started; beside files that mostly wait on the service and
// daemons it takes one of the --jobs places for that time.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { makeTestTmpDir } from './test-tmpdir.mjs';

/**
 * Files that must not share the machine, with the reason. They run first, one at a time, before
 * the parallel part starts. Keep this list short: a file that merely is slow belongs in the
 * parallel part, and a bound that holds only on an idle machine is better made relative.
 */
const ALONE = new Map([
  [
    'test/lrms/slurm.test.js',
    'freezes slurmctld and bounds sbatch with 1 s command timeouts, and races 200 jobs through ' +
      "the private Slurm's own scheduling: files beside it starve slurmctld of CPU (seen failing " +
      'four at a time on a loaded 2-core machine, passing alone)',
  ],
  [
    'test/e2e/bounded-work.test.js',
    'bounds in wall-clock time (p99 1 s, max 3 s) how long another user waits while the service ' +
      'builds answers of 100,000 entries, with both cores busy with that: files beside it take the CPU ' +
      'those bounds are about',
  ],
]);

const DURATIONS = join('dist', 'test-durations.json');

const args = process.argv.slice(2);
const noInterop = args.includes('--no-interop');
const withCheck = args.includes('--check');
const jobsArg = args.indexOf('--jobs');
const jobs = Number(jobsArg >= 0 ? args[jobsArg + 1] : (process.env.CERES_TEST_JOBS ?? 2 * availableParallelism()));
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error('--jobs (or CERES_TEST_JOBS) must be a positive whole number');
  process.exit(2);
}
const roots = args.filter((a, i) => !a.startsWith('--') && !(jobsArg >= 0 && i === jobsArg + 1));
const files = [];
function walk(p) {
  const st = statSync(p);
  if (st.isDirectory()) {
    for (const n of readdirSync(p).sort()) walk(join(p, n));
  } else if (p.endsWith('.test.js')) {
    if (noInterop && p.includes(`${join('test', 'interop')}`)) return;
    files.push(relative(process.cwd(), p));
  }
}
for (const r of roots.length ? roots : ['dist/test']) {
  if (!existsSync(r)) {
    console.error(`no such test file or folder: ${r} (built? npm run build)`);
    process.exit(2);
  }
  walk(r);
}
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

/** The previous run's durations (ms by file), or an empty map. */
function previousDurations() {
  try {
    return new Map(Object.entries(JSON.parse(readFileSync(DURATIONS, 'utf8'))));
  } catch {
    return new Map();
  }
}

/** Without a previous run: a file that starts the service, Slurm or a browser is likely long. */
function guessWeight(file) {
  const text = readFileSync(file, 'utf8');
  return /startCeres\(|startStagingService\(|shortSoak\(|useSlurm\(|chromium/.test(text) ? 60_000 : 1_000;
}

const before = previousDurations();
const weight = new Map(files.map((f) => [f, before.get(f) ?? guessWeight(f)]));
const isAlone = (f) => [...ALONE.keys()].some((a) => f.endsWith(a));
const byWeight = (a, b) => weight.get(b) - weight.get(a) || a.localeCompare(b);
const parallel = files.filter((f) => !isAlone(f)).sort(byWeight);
const alone = files.filter(isAlone).sort();

const durations = new Map();
const failed = [];
/** A failed file's own summary of its failures, printed again at the very end of the run. */
const failureSummaries = new Map();
const started = Date.now();
const color = process.stdout.isTTY ? { FORCE_COLOR: '1' } : {};
// The files' temporary folder: on a tmpfs where there is one (scripts/test-tmpdir.mjs).
const testTmp = makeTestTmpDir();
const tmpEnv = testTmp === undefined ? {} : { TMPDIR: testTmp.dir };
if (testTmp !== undefined) {
  console.log(`temporary files under ${testTmp.dir}`);
  // Ctrl-C reaches the files too; what they leave is in memory until removed.
  process.once('SIGINT', () => {
    testTmp.remove();
    process.exit(130);
  });
}

/** The pseudo-file of `--check`: the static checks, run as a job of the parallel part. */
const CHECK = 'npm run check';

/** The process of a job: a test file in its own `node --test`, or the checks. */
function spawnJob(file) {
  if (file !== CHECK) {
    return spawn(process.execPath, ['--test', '--test-reporter=spec', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...tmpEnv, ...color },
    });
  }
  // No coverage of the linters themselves (c8 would read hundreds of MB of their coverage
  // only to filter it out), and their own temporary files where they usually are.
  const { NODE_V8_COVERAGE: _coverage, ...env } = process.env;
  return spawn('npm', ['run', 'check', '--silent'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, ...color } });
}

/** Runs one file (or the checks); prints its output when it ends. */
function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawnJob(file);
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('close', (code, signal) => {
      const ms = Date.now() - t0;
      if (file !== CHECK) durations.set(file, ms);
      const ok = code === 0;
      if (!ok) failed.push(file);
      const status = ok ? 'ok' : `FAILED (${signal ?? `exit ${code}`})`;
      process.stdout.write(`\n━━ ${file} ${status} in ${(ms / 1000).toFixed(1)} s\n`);
      const text = Buffer.concat(out);
      process.stdout.write(text);
      if (!ok) failureSummaries.set(file, failureSummary(text.toString('utf8')));
      resolve();
    });
  });
}

/**
 * The part of a failed file's output that says why: the spec reporter's closing "failing tests"
 * list, or the output's tail when the file ended before printing one (a crash, a signal). A long
 * run's log is often read from its end only, so this is printed again after the summary line.
 */
function failureSummary(text) {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.includes('failing tests:'));
  const part = at >= 0 ? lines.slice(at) : lines.slice(-60);
  return part.length > 200 ? [...part.slice(0, 200), `… (${part.length - 200} more lines)`] : part;
}

async function pool(list, width) {
  const queue = [...list];
  const worker = async () => {
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) await runFile(f);
  };
  await Promise.all(Array.from({ length: Math.min(width, list.length) }, worker));
}

try {
  await pool(alone, 1);
  // The checks first: the longest job of the part, so nothing waits for it at the end.
  await pool(withCheck ? [CHECK, ...parallel] : parallel, jobs);
} finally {
  testTmp?.remove();
}

// Merge into the earlier durations: a run of one folder keeps the others' figures.
const merged = { ...Object.fromEntries(before), ...Object.fromEntries(durations) };
if (existsSync('dist')) writeFileSync(DURATIONS, JSON.stringify(merged, null, 1) + '\n');

const total = ((Date.now() - started) / 1000).toFixed(1);
console.log(`\n${files.length} files, ${jobs} at a time, in ${total} s; ${failed.length} failed`);
for (const f of failed) console.log(`  failed: ${f}`);
const slowest = [...durations].sort((a, b) => b[1] - a[1]).slice(0, 12);
console.log(
  `slowest: ${slowest.map(([f, ms]) => `${f.replace(/^dist\/test\//, '')} ${(ms / 1000).toFixed(0)} s`).join(', ')}`,
);
for (const [f, summary] of failureSummaries) console.log(`\n━━ why ${f} failed\n${summary.join('\n')}`);
process.exit(failed.length === 0 ? 0 : 1);
