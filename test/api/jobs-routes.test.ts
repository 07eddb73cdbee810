// Routes at submission (docs/routes.md): the route a job takes is stored with it and
// reaches the sbatch command line; a job no route takes is refused per item with 403;
// a reload leaves routed jobs on their route; nothing from a description or a caller
// reaches the batch command line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobsFixture, HA } from './jobs-fixture.js';
import { buildConfig } from '../../src/config/load.js';
import type { Route } from '../../src/jobs/routes.js';
import { batchSpec } from '../../src/engine/scheduler/batch-spec.js';
import { sbatchArgs } from '../../src/lrms/slurm/sbatch-options.js';

type Items = { job: { 'status-code': string; reason: string; id?: string }[] };

const routesOf = (routes: unknown[]): readonly Route[] => buildConfig({ routes }).routes;
const PROD = { ...HA, 'x-test-fqans': '/atlas/Role=production,/atlas' };
const SETTINGS = { jobNamePrefix: 'ceres-', defaultPartition: 'dflt', killGraceSeconds: 10, extraArgs: ['--site=1'] };

const argsOf = (f: Awaited<ReturnType<typeof jobsFixture>>, id: string): string[] =>
  sbatchArgs(
    batchSpec(f.store.get(id)!, {
      sessionDir: '/s',
      lrmsDir: '/l',
      rteScripts: new Map(),
      serviceUrl: 'https://ce:443/arex',
    }),
    SETTINGS,
  );

test('a job takes the first matching route, stored with it, and its sbatch line carries only the route', async () => {
  let routes = routesOf([
    {
      name: 'atlas-prod',
      match: { fqans: ['/atlas/Role=production'] },
      partition: 'short',
      account: 'vo_a',
      qos: 'high',
      extraBatchArgs: ['--nice=1'],
    },
    { name: 'long', match: { queues: ['long'] }, partition: 'long', qos: 'low' },
  ]);
  const f = await jobsFixture({ routes: () => routes });
  try {
    // An injection attempt: options in every place a submitter writes.
    const evil =
      '(&(executable="/bin/true")(jobname="x --account=evil")(arguments="--qos=evil" "--partition=evil")' +
      '(environment=("SBATCH_ACCOUNT" "evil")("X" "--account=evil")))';
    const r = await f.submit(`+${evil}(&(executable="/bin/true")(queue="long"))(&(executable="/bin/true"))`, PROD);
    const items = r.json<Items>().job;
    assert.deepEqual(
      items.map((i) => i['status-code']),
      ['201', '201', '201'],
      'the FQAN route takes all three',
    );
    const prod = f.store.get(items[0]!.id!)!;
    assert.deepEqual(prod.route, {
      name: 'atlas-prod',
      partition: 'short',
      account: 'vo_a',
      qos: 'high',
      extraArgs: ['--nice=1'],
    });
    const args = argsOf(f, prod.id);
    assert.ok(args.includes('--partition=short') && args.includes('--account=vo_a') && args.includes('--qos=high'));
    assert.deepEqual(args.slice(-2), ['--site=1', '--nice=1'], "the route's options after the site's");
    assert.deepEqual(
      args.filter((a) => a.includes('evil')),
      [],
      'nothing of the description on the command line',
    );
    assert.equal(args.filter((a) => a.startsWith('--partition=')).length, 1);

    // Without the FQAN: the long queue's route, or no route at all (403 per item, others created).
    const plain = (
      await f.submit('+(&(executable="/bin/true")(queue="long"))(&(executable="/bin/true"))')
    ).json<Items>().job;
    assert.equal(plain[0]!['status-code'], '201');
    assert.deepEqual(f.store.get(plain[0]!.id!)!.route, { name: 'long', partition: 'long', qos: 'low' });
    assert.equal(plain[1]!['status-code'], '403');
    assert.equal(
      plain[1]!.reason,
      'No configured route takes this job (atlas-prod: FQANs (none) match none of /atlas/Role=production; long: queue main not among long)',
    );
    assert.equal(plain[1]!.id, undefined, 'nothing made for a refused item');

    // A reload that moves the long route elsewhere leaves the job already routed where it was.
    routes = routesOf([{ name: 'long', match: {}, partition: 'elsewhere' }]);
    assert.ok(argsOf(f, plain[0]!.id!).includes('--partition=long'));
    const later = (await f.submit('&(executable="/bin/true")')).json<Items>().job;
    assert.ok(argsOf(f, later[0]!.id!).includes('--partition=elsewhere'), 'new jobs take the reloaded route');
  } finally {
    await f.close();
  }
});

test('without routes nothing changes: no route stored, the queue is the partition', async () => {
  const f = await jobsFixture({ routes: () => [] });
  try {
    const items = (await f.submit('&(executable="/bin/true")(queue="long")')).json<Items>().job;
    assert.equal(items[0]!['status-code'], '201');
    assert.equal(f.store.get(items[0]!.id!)!.route, null);
    const args = argsOf(f, items[0]!.id!);
    assert.ok(args.includes('--partition=long'));
    assert.deepEqual(
      args.filter((a) => /^--(account|qos)=/.test(a)),
      [],
    );
  } finally {
    await f.close();
  }
});

test('a single refused description answers 403 with the catalog code, and the groups route', async () => {
  const f = await jobsFixture({
    routes: () => routesOf([{ name: 'ops', match: { groups: ['ops'] }, account: 'ops' }]),
  });
  try {
    const r = await f.submit('&(executable="/bin/true")', { ...HA, 'x-test-groups': 'users' }, '1.0');
    const body = r.json<Items>();
    assert.equal(body.job[0]!['status-code'], '403');
    assert.match(body.job[0]!.reason, /^No configured route takes this job \(ops: groups users not among ops\)$/);
    const ok = (await f.submit('&(executable="/bin/true")', { ...HA, 'x-test-groups': 'users,ops' })).json<Items>();
    assert.deepEqual(f.store.get(ok.job[0]!.id!)!.route, { name: 'ops', account: 'ops' });
  } finally {
    await f.close();
  }
});
