// Routes on a real Slurm with accounting (docs/routes.md, issue 44's "done when"): by
// configuration alone, VO A's jobs go to partition `short` under account `vo_a` and VO B's
// to partition `long` with QoS `low`, as `scontrol show job` and `sacct` report them; real
// VOMS proxies (voms-proxy-fake) say which VO a caller is. Nothing a description says moves
// a job to another route's partition or account. `config check` asks this Slurm for its
// partitions, QoS and accounts and names those a route names that it does not know.
// Skipped where Slurm (with slurmdbd) or voms-proxy-fake is missing, unless required.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Client,
  killProcessesUnder,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
  type RunningCeres,
} from '../helpers/service.js';
import { devUserVoProxies, vomsSkip } from '../auth/voms/voms-fixture.js';
import { ceresCli } from '../admin/cli.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip(true) ?? (vomsSkip || undefined);
const SLEEP = '&(executable="/bin/sleep")(arguments="600")';
const ROUTES = [
  { name: 'vo-a', match: { fqans: ['/atlas'] }, partition: 'short', account: 'vo_a' },
  { name: 'vo-b', match: { fqans: ['/cms'] }, partition: 'long', qos: 'low' },
];

describe('routes on a real Slurm: VO A to short/vo_a, VO B to long/low', { ...(skip ? { skip } : {}) }, () => {
  if (skip) return;
  const slurm = useSlurm({
    accounting: true,
    env: { SLURM_DEV_EXTRA_PARTITIONS: 'short', SLURM_DEV_ACCOUNTS: 'vo_a vo_b', SLURM_DEV_QOS: 'low' },
  });
  let work = '';
  let ceres: RunningCeres | undefined;
  const clients: Record<string, Client> = {};
  const ids: string[] = [];

  before(async () => {
    work = tempDir('slurm-routes');
    const voms = await devUserVoProxies(work, ['atlas', 'cms']);
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        vomsDir: voms.vomsDir,
        authorization: {
          groups: [{ name: 'vos', match: [{ voms: '/atlas' }, { voms: '/cms' }] }],
          allow: ['vos'],
        },
        cluster: { queues: [{ name: 'main' }] },
        routes: ROUTES,
        lrms: {
          backend: 'slurm',
          slurm: { slurmConf: slurm.conf, pollIntervalMs: 300, infoRefreshMs: 300, killGraceSeconds: 2 },
        },
      },
    });
    for (const vo of ['atlas', 'cms'])
      clients[vo] = new Client(ceres.url, voms.proxy(vo), join(ceres.pkiDir, 'ca.pem'));
  });

  after(async () => {
    if (ids.length > 0 && clients.atlas) {
      // Each job belongs to the one dev user, whichever VO it came with.
      await clients.atlas.action('kill', ids);
      await clients.atlas.waitFor(ids, ['KILLED', 'FAILED', 'FINISHED'], 60_000);
    }
    for (const c of Object.values(clients)) await c.close();
    if (ceres) await stopCeres(ceres);
    // A killed job's processes that Slurm's stop left behind (they run as another account).
    if (work) killProcessesUnder(work);
    if (work) removeDir(work);
  });

  /** Slurm's job id of a Ceres job (its job name is ceres-<id>). */
  const slurmId = (id: string): string =>
    slurm.cmd('squeue', ['-h', '-a', '-t', 'all', `--name=ceres-${id}`, '-o', '%i']).trim();
  /** Partition, account and QoS as `scontrol show job` says. */
  const scontrol = (sid: string): Record<string, string> => {
    const out = slurm.cmd('scontrol', ['show', 'job', sid]);
    const field = (k: string): string => new RegExp(`\\b${k}=(\\S*)`).exec(out)?.[1] ?? '';
    const r = { partition: field('Partition'), account: field('Account'), qos: field('QOS') };
    if (r.partition === '') assert.fail(`scontrol show job ${sid}:\n${out}`);
    return r;
  };
  /** The same from the accounting database (sacct), once slurmdbd has the job. */
  const sacct = async (sid: string): Promise<Record<string, string>> => {
    for (let i = 0; i < 300; i++) {
      const line = slurm.cmd('sacct', ['-n', '-P', '-X', '-j', sid, '-o', 'partition,account,qos']).trim();
      // slurmdbd may first hold the job without its partition and QoS (`|...|Unknown`).
      const [partition = '', account = '', qos = ''] = line.split('|');
      if (partition !== '' && qos !== 'Unknown') return { partition, account, qos };
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`sacct never listed job ${sid} with its partition and QoS`);
  };

  const submitAs = async (vo: string, description: string): Promise<string> => {
    const [item] = await clients[vo]!.submit(description);
    assert.equal(item['status-code'], '201', JSON.stringify(item));
    const id = item.id as string;
    ids.push(id);
    const st = await clients[vo]!.waitFor([id], ['RUNNING'], 90_000);
    assert.equal(st.get(id), 'RUNNING');
    return id;
  };

  it('VO A: partition short, account vo_a; VO B: partition long, QoS low (scontrol and sacct)', async () => {
    const a = slurmId(await submitAs('atlas', SLEEP));
    const b = slurmId(await submitAs('cms', SLEEP));
    assert.deepEqual(scontrol(a), { partition: 'short', account: 'vo_a', qos: 'normal' });
    assert.deepEqual(scontrol(b), { ...scontrol(b), partition: 'long', qos: 'low' });
    assert.notEqual(scontrol(b).account, 'vo_a');
    assert.deepEqual(await sacct(a), { partition: 'short', account: 'vo_a', qos: 'normal' });
    const bAcct = await sacct(b);
    assert.deepEqual(bAcct, { ...bAcct, partition: 'long', qos: 'low' });
  });

  it("VO B's description naming VO A's partition, account and queue in every field does not move it", async () => {
    const evil =
      '&(executable="/bin/sh")(arguments="-c" "sleep 600" "--account=vo_a")(jobname="x --partition=short --account=vo_a")' +
      '(environment=("SBATCH_ACCOUNT" "vo_a")("SBATCH_PARTITION" "short"))(queue="main")';
    const b = slurmId(await submitAs('cms', evil));
    const got = scontrol(b);
    assert.equal(got.partition, 'long');
    assert.equal(got.qos, 'low');
    assert.notEqual(got.account, 'vo_a');
    // A queue named after VO A's partition or route is no Ceres queue: refused, nothing submitted.
    for (const q of ['short', 'vo-a', 'MAIN', 'main ']) {
      const [item] = await clients.cms!.submit(`&(executable="/bin/true")(queue="${q}")`);
      assert.match(String(item['status-code']), /^4\d\d$/, `queue ${JSON.stringify(q)}: ${JSON.stringify(item)}`);
    }
  });

  it('config check against this Slurm: an unknown partition, QoS and account are errors; the known pass', async () => {
    const config = (routes: unknown[]): string => {
      const f = join(work, `check-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(
        f,
        JSON.stringify({
          stateDir: join(work, 'check-state'),
          routes,
          lrms: { backend: 'slurm', slurm: { slurmConf: slurm.conf } },
        }),
      );
      return f;
    };
    const good = await ceresCli(['admin', 'config', 'check', config(ROUTES)]);
    assert.equal(good.code, 0, good.stdout + good.stderr);
    const bad = await ceresCli([
      'admin',
      'config',
      'check',
      config([{ name: 'x', match: {}, partition: 'shortt', qos: 'lowest', account: 'vo_c' }]),
    ]);
    assert.equal(bad.code, 1);
    const out = bad.stdout + bad.stderr;
    assert.match(
      out,
      /config key 'routes\.0\.partition': route x: Slurm has no partition shortt \(it knows debug, long, short\)/,
    );
    assert.match(out, /config key 'routes\.0\.qos': route x: Slurm has no QoS lowest \(it knows normal, low\)/);
    assert.match(out, /config key 'routes\.0\.account': route x: Slurm has no account vo_c/);
    assert.doesNotMatch(out, /warning/);
  });
});
