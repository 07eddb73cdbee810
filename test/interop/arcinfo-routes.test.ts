// The real ARC client against a Ceres whose routes are published as shares (docs/routes.md):
// arcinfo still lists every queue, now with a share per route whose Mapping queue is the
// Ceres queue; and arcsub, whose broker may pick any of those shares, submits to a queue
// Ceres has (the route share's MappingQueue, never the route's name), where the job is
// routed on arrival. Skipped where the client is not installed unless CERES_REQUIRE_INTEROP=1.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { ceresCli } from '../admin/cli.js';
import { type ArcClient, devUserClient, interopRequired, missingArcCommands } from './arc-cli.js';

const missing = missingArcCommands();
const skip =
  missing.length > 0 && !interopRequired()
    ? `ARC client not installed (missing ${missing.join(', ')}); CERES_REQUIRE_INTEROP=1 makes this a failure`
    : false;

describe('the ARC client and routes published as shares', { skip }, () => {
  let ceres: RunningCeres | undefined;
  let work: string;
  let arc: ArcClient;

  before(async () => {
    if (missing.length > 0)
      throw new Error(`CERES_REQUIRE_INTEROP is set but the ARC client is missing ${missing.join(', ')}`);
    work = tempDir('interop-routes');
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        cluster: { queues: [{ name: 'main' }, { name: 'long' }] },
        routes: [
          { name: 'atlas-prod', match: { fqans: ['/atlas/Role=production'], queues: ['main'] }, maxRunning: 4 },
          { name: 'short-jobs', match: { maxWallTimeSeconds: 600 } },
          { name: 'rest', match: {} },
        ],
      },
    });
    const c = ceres;
    arc = await devUserClient(work, c);
  });

  after(async () => {
    if (ceres) await stopCeres(ceres);
    if (work) removeDir(work);
  });

  it('arcinfo lists both queues and a share per route and queue, each mapped to a Ceres queue', async () => {
    const long = await arc.ok('arcinfo', ['-l', '-c', ceres!.url]);
    // Each share: its Name, later its Mapping queue; pair them up in the order printed.
    const names = [...long.stdout.matchAll(/^\s*Name: (\S+)\s*$/gm)].map((m) => m[1]);
    const queues = [...long.stdout.matchAll(/^\s*Mapping queue: (\S+)\s*$/gm)].map((m) => m[1]);
    for (const q of ['main', 'long'])
      assert.ok(queues.includes(q), arc.report(long, `arcinfo shows no share mapped to queue ${q}`));
    for (const r of ['atlas-prod', 'short-jobs', 'rest'])
      assert.ok(names.includes(r), arc.report(long, `arcinfo shows no share of route ${r}`));
    // Route shares: atlas-prod in main only, the others in both queues; no queue the service lacks.
    assert.deepEqual([...new Set(queues)].sort(), ['long', 'main'], arc.report(long, 'mapping queues'));
    assert.equal(queues.length, 2 + 1 + 2 + 2, arc.report(long, 'one mapping queue per share'));
  });

  it('arcsub without a queue and with each queue: the jobs land in a Ceres queue and take their route', async () => {
    const ids: string[] = [];
    const jobs = [
      ['any', '&(executable="/bin/true")(wallTime="5 minutes")'],
      ['main', '&(executable="/bin/true")(queue="main")'],
      ['long', '&(executable="/bin/true")(queue="long")(wallTime="5 minutes")'],
    ] as const;
    for (const [name, xrsl] of jobs) {
      const file = join(work, `${name}.xrsl`);
      writeFileSync(file, xrsl);
      const r = await arc.ok('arcsub', ['-C', ceres!.url, '-T', 'arcrest', '-j', join(work, 'jobs.dat'), '-f', file]);
      const id = arc.expect(r, /^Job submitted with jobid: (\S+)$/m, 'arcsub printed no job id')[1]!;
      ids.push(id.slice(id.lastIndexOf('/') + 1));
    }
    const config = join(ceres!.stateDir, 'test-config.json');
    const show = async (id: string): Promise<{ queue: string; route: string | null }> => {
      const r = await ceresCli(['admin', '--config', config, '--state-dir', ceres!.stateDir, '--json', 'show', id]);
      assert.equal(r.code, 0, r.stderr);
      return r.json() as { queue: string; route: string | null };
    };
    const got = await Promise.all(ids.map(show));
    // A job asking 5 minutes takes short-jobs; one naming no wall time goes on to rest.
    assert.ok(['main', 'long'].includes(got[0]!.queue), JSON.stringify(got[0]));
    assert.equal(got[0]!.route, 'short-jobs');
    assert.deepEqual(got[1], { ...got[1], queue: 'main', route: 'rest' });
    assert.deepEqual(got[2], { ...got[2], queue: 'long', route: 'short-jobs' });
  });
});
