/**
 * `npm run bench -- --endpoint URL --cert F --key F --ca F [--scenario NAME] [--quick] [--json OUT]`
 *
 * Measures one ARC REST endpoint (Ceres, A-REX, anything speaking the interface) and
 * prints a markdown table on stdout; progress and per-scenario lines go to stderr.
 * Exit status: 0 when the run completed (individual scenarios may have failed: the
 * table says so), 1 when the endpoint could not be used at all, 2 for a bad command line.
 */
import { BENCH_USAGE, parseBenchArgs } from './harness/args.js';
import { BenchError } from './harness/failures.js';
import { Progress } from './harness/progress.js';
import { EndpointSession } from './harness/session.js';
import { gitCommit, machineInfo } from './harness/machine.js';
import { renderSingle } from './harness/render.js';
import type { RunReport } from './harness/results.js';
import { cleanupAll, onInterrupt, runAll, writeText } from './orchestrate.js';
import { interruption } from './harness/runner.js';

async function main(): Promise<number> {
  const parsed = parseBenchArgs(process.argv.slice(2));
  if (parsed.help) {
    process.stdout.write(BENCH_USAGE);
    return 0;
  }
  const o = parsed.options;
  const progress = new Progress();
  onInterrupt(progress);
  const label = o.label ?? new URL(o.endpoint).host;
  progress.update(`${label}: connecting to ${o.endpoint}`, true);
  const session = await EndpointSession.open({
    label,
    url: o.endpoint,
    paths: { cert: o.cert, key: o.key, ca: o.ca },
    options: o,
    counts: o.counts,
    progress,
    pids: o.pids,
  });
  progress.done(
    `${label}: ARC REST ${session.client.version} at ${o.endpoint}; server key ${session.report.serverKey}; ${session.pids.length ? `server pid ${session.pids.join(', ')}` : 'server pid unknown (RSS and CPU not measured)'}`,
  );
  const report: RunReport = {
    tool: 'ceres-bench',
    kind: 'single',
    date: new Date().toISOString(),
    commit: await gitCommit(),
    machine: machineInfo(),
    quick: o.quick,
    complete: false,
    endpoints: [session.report],
  };
  // Saved after every scenario, so a run that is killed keeps what it measured.
  const save = async (): Promise<void> => {
    if (o.json !== undefined) await writeText(o.json, `${JSON.stringify(report, null, 2)}\n`);
  };
  try {
    await runAll([session], o.scenarios, progress, save);
    report.complete = !interruption.requested;
    await cleanupAll([session], progress);
  } finally {
    await session.close();
    await save();
  }
  process.stdout.write(renderSingle(report));
  if (o.json !== undefined) process.stderr.write(`results written to ${o.json}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof BenchError) {
      process.stderr.write(`\nbench: ${e.message}\n`);
      process.exitCode = e.kind === 'usage' ? 2 : 1;
      if (e.kind === 'usage') process.stderr.write('(npm run bench -- --help for the options)\n');
    } else {
      process.stderr.write(`\nbench: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 1;
    }
  },
);
