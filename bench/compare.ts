/**
 * `npm run bench:compare [-- options]`
 *
 * Starts Ceres from this build on a free loopback port (fresh state directory, its own
 * development PKI), adds the reference A-REX when it answers (or, with --with-arex,
 * starts it), runs every chosen scenario against each in the same run, prints the
 * side-by-side table and writes bench/results/<date>-<commit>.{md,json}.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { COMPARE_USAGE, parseCompareArgs, type CompareOptions } from './harness/args.js';
import { BenchError } from './harness/failures.js';
import { Progress } from './harness/progress.js';
import { EndpointSession } from './harness/session.js';
import { gitCommit, isoDate, machineInfo } from './harness/machine.js';
import { renderCompare } from './harness/render.js';
import type { RunReport } from './harness/results.js';
import { cleanupAll, onInterrupt, runAll, writeText } from './orchestrate.js';
import { interruption } from './harness/runner.js';
import { startCeres, type CeresInstance } from './compare/ceres.js';
import { arexPids, runArexSetup } from './compare/arex.js';

async function openArex(o: CompareOptions, progress: Progress): Promise<EndpointSession | undefined> {
  const open = async (): Promise<EndpointSession> =>
    EndpointSession.open({
      label: 'A-REX',
      url: o.arexEndpoint,
      paths: { cert: o.arexCert, key: o.arexKey, ca: o.arexCa },
      options: o,
      counts: { ...o.counts, ...o.arexCounts },
      progress,
      pids: await arexPids(),
    });
  progress.update(`A-REX: connecting to ${o.arexEndpoint}`, true);
  try {
    return await open();
  } catch (e) {
    const reason = e instanceof BenchError ? e.message : String(e);
    const notThere =
      e instanceof BenchError && (e.kind === 'unreachable' || (e.kind === 'usage' && reason.startsWith('cannot read')));
    if (!o.withArex) {
      progress.done(`A-REX not used: ${reason}${notThere ? ' (pass --with-arex --arex-setup FILE to start it)' : ''}`);
      return undefined;
    }
    if (!notThere || o.arexSetup === undefined) throw e;
    progress.done(`A-REX does not answer (${reason}); starting it with ${o.arexSetup}`);
    await runArexSetup(o.arexSetup, Number(new URL(o.arexEndpoint).port || 443));
    return open();
  }
}

async function resultPaths(dir: string, date: string, commit: string): Promise<{ md: string; json: string }> {
  for (let i = 1; ; i++) {
    const base = join(dir, `${date}-${commit}${i > 1 ? `-${i}` : ''}`);
    if (!existsSync(`${base}.md`) && !existsSync(`${base}.json`)) return { md: `${base}.md`, json: `${base}.json` };
  }
}

async function main(): Promise<number> {
  const parsed = parseCompareArgs(process.argv.slice(2));
  if (parsed.help) {
    process.stdout.write(COMPARE_USAGE);
    return 0;
  }
  const o = parsed.options;
  const progress = new Progress();
  onInterrupt(progress);
  const started = new Date();
  const commit = await gitCommit();
  const paths = await resultPaths(o.outDir, isoDate(started), commit);
  const sessions: EndpointSession[] = [];
  const report: RunReport = {
    tool: 'ceres-bench',
    kind: 'compare',
    date: started.toISOString(),
    commit,
    machine: machineInfo(),
    quick: o.quick,
    complete: false,
    endpoints: [],
  };
  // Saved after every scenario, so a run that is killed keeps what it measured.
  const save = async (): Promise<void> => {
    report.endpoints.splice(0, report.endpoints.length, ...sessions.map((s) => s.report));
    await writeText(paths.md, renderCompare(report));
    await writeText(paths.json, `${JSON.stringify(report, null, 2)}\n`);
  };
  let ceres: CeresInstance | undefined;
  try {
    progress.update('Ceres: starting', true);
    ceres = await startCeres(o.ceresConfig);
    // Its whole state directory goes away afterwards: no per-job cleanup needed.
    const cs = await EndpointSession.open({
      label: 'Ceres',
      url: ceres.url,
      paths: {
        cert: join(ceres.pkiDir, 'userproxy.pem'),
        key: join(ceres.pkiDir, 'userproxy.pem'),
        ca: join(ceres.pkiDir, 'ca.pem'),
      },
      options: { ...o, cleanup: false },
      counts: o.counts,
      progress,
      pids: [ceres.pid],
    });
    sessions.push(cs);
    progress.done(`Ceres: ARC REST ${cs.client.version} at ${ceres.url} (pid ${ceres.pid}; log ${ceres.logPath})`);
    const arex = await openArex(o, progress);
    if (arex) {
      sessions.push(arex);
      progress.done(
        `A-REX: ARC REST ${arex.client.version} at ${o.arexEndpoint} (pid ${arex.pids.join(', ') || 'unknown'})`,
      );
    }
    await runAll(sessions, o.scenarios, progress, save);
    report.complete = !interruption.requested;
    await cleanupAll(
      sessions.filter((s) => s.label !== 'Ceres'),
      progress,
    );
  } finally {
    for (const s of sessions) await s.close();
    progress.update('Ceres: stopping', true);
    await ceres?.stop();
    progress.done();
    if (sessions.length > 0) await save();
  }
  process.stdout.write(renderCompare(report));
  process.stderr.write(`results written to ${paths.md} and ${paths.json}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    if (e instanceof BenchError) {
      process.stderr.write(`\nbench:compare: ${e.message}\n`);
      process.exitCode = e.kind === 'usage' ? 2 : 1;
    } else {
      process.stderr.write(`\nbench:compare: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
      process.exitCode = 1;
    }
  },
);
