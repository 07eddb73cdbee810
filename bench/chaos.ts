/**
 * `npm run build && node dist/bench/chaos.js [--seconds 180] [--clients 64] [--kill-min-ms 2000]
 *   [--kill-max-ms 5000] [--settle 300] [--soak] [--warmup 60] [--mapped] [--config FILE]
 *   [--out-dir bench/results]`
 *
 * Starts a Ceres from this build on a fresh state directory and runs the soak mix
 * (bench/soak/mix.ts) from two users of its development PKI against it, `kill -9`ing
 * the service every 2-5 s at random and starting it again on the same state and port
 * (chaos). After the last restart every job acknowledged with 201 must exist, end, and
 * have run at most once, and none may have FAILED (the mix asks for no failure, so one
 * is the service's, under chaos its crash's). With --mapped (as root) the two users are
 * mapped to two new local accounts (bench/soak/mapped.ts): the jobs run as those, in
 * session directories the service makes and gives away while it is being killed.
 * With --soak nothing is killed and the service's own exits,
 * 5xx answers and RSS growth are what count: the same as the bench scenario `soak`,
 * but with the service under the harness's eye (its crashes and their log lines are
 * reported). Writes bench/results/<date>-<commit>-{chaos,soak}.{md,json}; exit status 0
 * when every check passed, 1 when one failed, 2 for a bad command line.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { intArg } from './harness/args.js';
import { BenchError } from './harness/failures.js';
import { gitCommit, isoDate, machineInfo } from './harness/machine.js';
import { Progress } from './harness/progress.js';
import { writeText } from './orchestrate.js';
import { makeLedger } from './soak/ledger.js';
import { soakMarkdown } from './soak/render.js';
import { runSoak } from './soak/run.js';
import { CeresService } from './soak/service.js';
import { devPkiUsers, mixUsers } from './soak/users.js';
import { canMap, mappedUsers } from './soak/mapped.js';
import { soakProblems } from './scenarios/soak.js';

const USAGE = `usage: node dist/bench/chaos.js [options]   (after npm run build)

  --seconds S       seconds of mixed work (default 180; --soak 600)
  --clients N       concurrent clients, split over two users (default 64)
  --kill-min-ms N   shortest gap between two kill -9 (default 2000)
  --kill-max-ms N   longest gap (default 5000)
  --settle S        longest wait for every job to end afterwards (default 300)
  --soak            no kills: a soak of the harness-started service (RSS, crashes)
  --warmup S        --soak: seconds before the RSS figure "after warm-up" (default 60)
  --mapped          as root: the two users mapped to two new local accounts (useradd)
  --config FILE     a Ceres configuration (JSON) merged into the test one
  --out-dir DIR     where results go (default bench/results)
`;

async function main(): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      options: {
        help: { type: 'boolean', short: 'h' },
        seconds: { type: 'string' },
        clients: { type: 'string' },
        'kill-min-ms': { type: 'string' },
        'kill-max-ms': { type: 'string' },
        settle: { type: 'string' },
        soak: { type: 'boolean' },
        warmup: { type: 'string' },
        mapped: { type: 'boolean' },
        config: { type: 'string' },
        'out-dir': { type: 'string' },
      },
      strict: true,
    }).values;
  } catch (e) {
    throw new BenchError('usage', (e as Error).message);
  }
  if (values.help === true) {
    process.stdout.write(USAGE);
    return 0;
  }
  const num = (k: string, d: number, min = 1): number =>
    typeof values[k] === 'string' ? intArg(k, values[k], min) : d;
  const soak = values.soak === true;
  const seconds = num('seconds', soak ? 600 : 180);
  const clients = num('clients', 64);
  const minMs = num('kill-min-ms', 2000);
  const maxMs = num('kill-max-ms', 5000);
  if (maxMs < minMs) throw new BenchError('usage', '--kill-max-ms must be at least --kill-min-ms');
  const settleS = num('settle', 300);
  const warmupS = num('warmup', 60, 0);
  const config =
    typeof values.config === 'string'
      ? (JSON.parse(await readFile(values.config, 'utf8')) as Record<string, unknown>)
      : {};
  const outDir = typeof values['out-dir'] === 'string' ? values['out-dir'] : 'bench/results';
  const mapped = values.mapped === true;
  if (mapped && !canMap()) throw new BenchError('usage', '--mapped needs root (useradd, a root service)');

  const progress = new Progress();
  const root = await mkdtemp(join(tmpdir(), 'ceres-chaos-'));
  const ledger = await makeLedger(root);
  const accounts = mapped ? await mappedUsers(root, join(root, 'service', 'state'), ledger) : undefined;
  const service = await CeresService.start(join(root, 'service'), { ...config, ...accounts?.config }).catch(
    (e: unknown) => {
      accounts?.remove();
      throw e;
    },
  );
  const started = new Date();
  try {
    const files = accounts?.files ?? (await devPkiUsers(service.pkiDir));
    const users = await mixUsers(service.url, files, Math.ceil(clients / files.length), '1.1');
    progress.done(
      `Ceres at ${service.url} (pid ${service.pid}); ${clients} clients of ${files.length} ${mapped ? 'mapped ' : ''}users for ${seconds} s${soak ? '' : `, kill -9 every ${minMs}-${maxMs} ms`}`,
    );
    let r;
    try {
      r = await runSoak({
        users,
        clients,
        seconds,
        warmupS: soak ? warmupS : 0,
        ledger,
        pids: () => (service.pid === undefined ? [] : [service.pid]),
        settleS,
        runId: randomBytes(3).toString('hex'),
        service,
        ...(soak ? {} : { chaos: { service, minMs, maxMs } }),
        progress: (t) => progress.update(t),
      });
    } finally {
      for (const u of users) await u.client.close();
    }
    progress.done();
    const problems = soakProblems(r).filter((p) => soak || (!p.startsWith('RSS') && !/requests got no answer/.test(p)));
    if (!soak && r.chaos && r.chaos.restartFailures.length > 0)
      problems.push(`${r.chaos.restartFailures.length} restarts failed: ${r.chaos.restartFailures[0]}`);
    const commit = await gitCommit();
    const kind = soak ? 'soak' : 'chaos';
    const base = join(outDir, `${isoDate(started)}-${commit}-${kind}`);
    const m = machineInfo();
    const meta = [
      `date ${started.toISOString()}, commit ${commit}`,
      `${m.cpu} (${m.cores} cores), ${m.memoryGiB} GiB, Linux ${m.kernel}, Node ${m.node}`,
      ...(mapped ? ['two users mapped to two local accounts (a root service with a `mapping` section)'] : []),
      `command: node dist/bench/chaos.js ${process.argv.slice(2).join(' ')}`.trim(),
    ];
    const md = soakMarkdown(
      soak ? 'Soak (harness-started Ceres)' : 'Chaos: kill -9 during the soak mix',
      meta,
      r,
      problems,
    );
    await writeText(`${base}.md`, md);
    await writeText(
      `${base}.json`,
      `${JSON.stringify({ tool: 'ceres-bench', kind, date: started.toISOString(), commit, machine: m, options: { seconds, clients, minMs, maxMs, settleS, warmupS, mapped }, problems, report: r }, null, 2)}\n`,
    );
    process.stdout.write(md);
    process.stderr.write(`results written to ${base}.md and ${base}.json\n`);
    return problems.length === 0 ? 0 : 1;
  } finally {
    await service.stop();
    accounts?.remove();
    await rm(root, { recursive: true, force: true });
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`\nchaos: ${e instanceof BenchError ? e.message : ((e as Error)?.stack ?? String(e))}\n`);
    process.exitCode = e instanceof BenchError && e.kind === 'usage' ? 2 : 1;
  },
);
