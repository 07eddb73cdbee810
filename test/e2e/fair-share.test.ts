// Fair share and route limits in the engine, on the real service (fork backend, a bounded
// number of batch slots): with every route waiting, freed slots go to the routes in
// proportion to their shares (3:1), not in submission order; a route's maxRunning keeps
// its other jobs waiting in Ceres while slots are free. Before the chooser, one user's
// jobs went first come first served: the first route took every slot.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ceresCli } from '../admin/cli.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { sample, scrape } from '../ops/scrape.js';

const SLOTS = 4;
const IN_BATCH = new Set(['SUBMITTING', 'QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER']);
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];
const sleepIn = (queue: string, n: number): string =>
  `+${`(&(executable="/bin/sleep")(arguments="300")(queue="${queue}"))`.repeat(n)}`;

describe('fair share between routes (real service)', () => {
  let ceres: RunningCeres;
  let alice: Client;
  const all: string[] = [];

  before(async () => {
    ceres = await startCeres({
      config: {
        cluster: { queues: [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'fill' }] },
        engine: { maxRunningJobs: SLOTS },
        routes: [
          { name: 'ra', match: { queues: ['a'] } },
          { name: 'rb', match: { queues: ['b'] } },
          { name: 'rc', match: { queues: ['c'] }, maxRunning: 1 },
          { name: 'rfill', match: { queues: ['fill'] } },
        ],
        fairShare: { by: 'route', shares: { ra: 3, rb: 1 } },
        metrics: { listen: '127.0.0.1:0' },
      },
    });
    alice = Client.forUser(ceres);
  });

  after(async () => {
    if (all.length > 0 && alice) {
      await alice.action('kill', all);
      await alice.waitFor(all, ENDED, 60_000);
    }
    await alice?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  const submit = async (queue: string, n: number): Promise<string[]> => {
    const ids = (await alice.submit(sleepIn(queue, n))).map((j) => j.id as string);
    assert.equal(ids.length, n);
    all.push(...ids);
    return ids;
  };
  /** Polls until `done` holds for the states of `ids` (60 s). */
  const until = async (ids: string[], what: string, done: (st: string[]) => boolean): Promise<string[]> => {
    const deadline = Date.now() + 60_000;
    let st: string[] = [];
    while (Date.now() < deadline) {
      st = [...(await alice.status(ids)).values()];
      if (done(st)) return st;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`${what}: states ${st.join(' ')}`);
  };
  /** `ceres admin show` of job `id`, with the service's configuration: its "waiting" line. */
  const why = async (id: string): Promise<string> => {
    const r = await ceresCli([
      'admin',
      '--config',
      join(ceres.stateDir, 'test-config.json'),
      '--state-dir',
      ceres.stateDir,
      '--json',
      'show',
      id,
    ]);
    assert.equal(r.code, 0, r.stderr);
    return String(r.json().waiting);
  };
  const inBatch = (st: string[]): number => st.filter((s) => IN_BATCH.has(s)).length;
  const prepared = (st: string[]): number => st.filter((s) => s === 'PREPARED').length;

  it("a route's maxRunning: one of its jobs in the batch system, the others wait (PREPARED) with slots free", async () => {
    const c = await submit('c', 3);
    const st = await until(c, 'one in the batch system, two waiting', (s) => inBatch(s) === 1 && prepared(s) === 2);
    // Each waiting job says which limit holds it, with its value (ceres admin show).
    const held = c[st.indexOf('PREPARED')]!;
    assert.equal(await why(held), 'held by route rc maxRunning 1 (1 in the batch system)');
    assert.equal(await why(c[st.findIndex((s) => IN_BATCH.has(s))]!), 'null', 'a running job does not wait');
    // The per-route gauge counts the route's jobs by REST state; other routes have none yet.
    const text = await scrape(ceres);
    assert.equal(sample(text, 'ceres_route_jobs', { route: 'rc', state: 'PREPARED' }), 2, text);
    const inBatchNow = ['SUBMITTING', 'QUEUING', 'RUNNING'].reduce(
      (n, state) => n + (sample(text, 'ceres_route_jobs', { route: 'rc', state }) ?? 0),
      0,
    );
    assert.equal(inBatchNow, 1, text);
    assert.equal(sample(text, 'ceres_route_jobs', { route: 'ra', state: 'PREPARED' }), undefined);
    await alice.action('kill', c);
    await alice.waitFor(c, ENDED, 60_000);
  });

  it('with both routes waiting, freed slots go 3:1 by share, and a freed slot goes back to its route', async () => {
    const fill = await submit('fill', SLOTS);
    await until(fill, 'the slots taken', (st) => inBatch(st) === SLOTS);
    // Route b's jobs first: first come first served would give b every slot.
    const b = await submit('b', 8);
    const a = await submit('a', 8);
    await until([...a, ...b], 'every job waiting', (st) => prepared(st) === 16);
    assert.equal(await why(a[0]!), `waiting for a batch slot: engine.maxRunningJobs ${SLOTS} reached`);
    await alice.action('kill', fill);
    const both = async (): Promise<[number, number]> => {
      await until([...a, ...b], 'the slots taken again', (s) => inBatch(s) === SLOTS);
      const st = await alice.status([...a, ...b]);
      const of = (ids: string[]): number => ids.filter((id) => IN_BATCH.has(st.get(id)!)).length;
      return [of(a), of(b)];
    };
    assert.deepEqual(await both(), [3, 1], 'route a 3, route b 1');
    // An a job ends: an a job takes its place (a is below its share, b is at it).
    const aStates = await alice.status(a);
    const runningA = a.find((id) => IN_BATCH.has(aStates.get(id)!))!;
    await alice.action('kill', [runningA]);
    await alice.waitFor([runningA], ENDED, 60_000);
    assert.deepEqual(await both(), [3, 1]);
  });
});
