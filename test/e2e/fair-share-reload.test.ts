// Route limits added by a reload (SIGHUP) hold at once, counting the jobs already in the
// batch system (docs/routes.md, "Limits and fair share"). Before, `routes` and `fairShare`
// were not reloadable (kept until a restart), and a service started without a route limit
// or fair share did not count jobs per route at all: a limit added later held nothing
// until the next start.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until, untilValue } from '../helpers/poll.js';

const IN_BATCH = new Set(['SUBMITTING', 'QUEUING', 'RUNNING']);
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];
const stateDir = tempDir('fair-share-reload');
const logFile = join(stateDir, 'ceres.log');
const configFile = join(stateDir, 'test-config.json');
const base = {
  log: { level: 'info', file: logFile },
  cluster: { queues: [{ name: 'a' }, { name: 'b' }] },
  routes: [
    { name: 'ra', match: { queues: ['a'] } },
    { name: 'rb', match: { queues: ['b'] } },
  ],
};
const sleepIn = (queue: string, n: number): string =>
  `+${`(&(executable="/bin/sleep")(arguments="300")(queue="${queue}"))`.repeat(n)}`;

const reloads = (): number =>
  existsSync(logFile)
    ? readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => /"msg":"configuration (reloaded|not reloaded)/.test(l)).length
    : 0;

describe('route limits and shares added by SIGHUP', () => {
  let ceres: RunningCeres;
  let c: Client;
  const all: string[] = [];
  /** The jobs submitted to queue a (route ra). */
  const ra: string[] = [];
  /** Rewrite the configuration file, send SIGHUP, wait until the service has dealt with it. */
  const hup = async (config: unknown): Promise<void> => {
    const want = reloads() + 1;
    writeFileSync(configFile, JSON.stringify(config));
    ceres.child.kill('SIGHUP');
    await until(() => reloads() >= want, 'reload logged');
  };
  const submit = async (queue: string, n: number): Promise<string[]> => {
    const ids = (await c.submit(sleepIn(queue, n))).map((j) => j.id as string);
    assert.equal(ids.length, n);
    all.push(...ids);
    if (queue === 'a') ra.push(...ids);
    return ids;
  };
  /** Jobs of route ra in the batch system now. */
  const inRoute = async (): Promise<number> => {
    const st = await c.status(all);
    return ra.filter((id) => IN_BATCH.has(st.get(id)!)).length;
  };
  const waiting = async (id: string): Promise<string[]> => {
    const [i] = await c.action('info', [id]);
    const m = (i.info_document as { ComputingActivity: { OtherMessages?: string | string[] } }).ComputingActivity
      .OtherMessages;
    return (m === undefined ? [] : Array.isArray(m) ? m : [m]).filter((x) => x.startsWith('Waiting: '));
  };

  before(async () => {
    ceres = await startCeres({ stateDir, config: base });
    c = Client.forUser(ceres);
  });
  after(async () => {
    if (all.length > 0 && c) {
      await c.action('kill', all);
      await c.waitFor(all, ENDED, 60_000);
    }
    await c?.close();
    if (ceres) await stopCeres(ceres);
    removeDir(stateDir);
  });

  it("a route's maxRunning added by a reload holds the route's next job, counting its jobs already in the batch system", async () => {
    const first = await submit('a', 2);
    await c.waitFor(first, ['RUNNING'], 60_000);
    await hup({ ...base, routes: [{ ...base.routes[0], maxRunning: 1 }, base.routes[1]] });
    const log = readFileSync(logFile, 'utf8');
    assert.match(log, /"applied":\["routes"\]/, 'routes are reloadable');
    const [held] = await submit('a', 1);
    assert.deepEqual(
      await untilValue('the job held', async () => {
        const w = await waiting(held!);
        return w.length > 0 ? w : undefined;
      }),
      ['Waiting: held by route ra maxRunning 1 (2 in the batch system)'],
    );
    assert.equal((await c.status([held!])).get(held!), 'PREPARED');
    // Another route is not held.
    const [other] = await submit('b', 1);
    await c.waitFor([other!], ['RUNNING'], 60_000);
    assert.equal((await c.status([held!])).get(held!), 'PREPARED', 'still held: 2 of route ra in the batch system');
    // Lifted by the next reload: the held job goes on.
    await hup(base);
    await c.action('kill', [first[0]!]);
    await c.waitFor([held!], [...IN_BATCH], 60_000);
  });

  it('a reload whose routes would refuse a start is refused whole: the running routes and limits stay', async () => {
    await hup({ ...base, routes: [{ ...base.routes[0], maxRunning: 1 }, base.routes[1]] });
    await hup({ ...base, routes: [{ name: 'ra', match: { queues: ['nosuch'] } }, base.routes[1]] });
    await hup({ ...base, routes: [base.routes[0], { ...base.routes[1], name: 'ra' }] });
    const log = readFileSync(logFile, 'utf8');
    assert.match(log, /"reason":"config key 'routes.0.match.queues': route ra: nosuch is no configured queue"/);
    assert.match(log, /"reason":"config key 'routes.1.name': route name ra is used twice"/);
    // Still route ra with its limit of 1: a new job of queue a is held.
    const [held] = await submit('a', 1);
    assert.deepEqual(
      await untilValue('the job held', async () => {
        const w = await waiting(held!);
        return w.length > 0 ? w : undefined;
      }),
      [`Waiting: held by route ra maxRunning 1 (${await inRoute()} in the batch system)`],
    );
  });
});
