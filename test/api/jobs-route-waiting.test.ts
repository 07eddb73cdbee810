// A route's waiting limits at submission (docs/routes.md): past `maxWaiting` jobs of a
// route accepted and not yet in the batch system, or `maxWaitingPerVo` of one VO within
// it, a new job of the route is refused as its own item (503 No more jobs allowed, naming
// the route and the limit), nothing is made for it, the other items are unaffected, and
// a job leaving for the batch system frees its place. Before the limits, every item was
// created.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jobsFixture, HA, HB } from './jobs-fixture.js';
import { buildConfig } from '../../src/config/load.js';
import type { Route } from '../../src/jobs/routes.js';
import { routeCountsSql } from '../../src/store/job-store.js';

type Item = { 'status-code': string; reason: string; id?: string };
type Items = { job: Item[] | Item };
/** The items of an answer: ARC's JSON gives a lone item as an object. */
const itemsOf = (r: { json: <T>() => T }): Item[] => {
  const j = r.json<Items>().job;
  return Array.isArray(j) ? j : [j];
};

const routesOf = (routes: unknown[]): readonly Route[] => buildConfig({ routes }).routes;
const job = (queue = 'main') => `(&(executable="/bin/true")(queue="${queue}"))`;
/** One description without the multi-job form (instances apply to it). */
const SINGLE = '&(executable="/bin/true")';
/** One description, as a request of its own. */
const one = (queue = 'main') => `+${job(queue)}`;
const many = (n: number, queue = 'main') => `+${job(queue).repeat(n)}`;
const ATLAS = { ...HA, 'x-test-fqans': '/atlas/Role=production' };
const ATLAS_B = { ...HB, 'x-test-fqans': '/atlas' };
const CMS = { ...HB, 'x-test-fqans': '/cms' };

const codes = (items: Item[]) => items.map((i) => i['status-code']);
const jobsOfRoute = (f: Awaited<ReturnType<typeof jobsFixture>>, ids: string[]) =>
  ids.filter((id) => f.store.get(id) !== undefined).length;

test("past a route's maxWaiting, further items are refused with 503 naming the route and the limit", async () => {
  const routes = routesOf([
    { name: 'small', match: { queues: ['main'] }, maxWaiting: 2 },
    { name: 'other', match: {} },
  ]);
  const f = await jobsFixture({ routes: () => routes });
  try {
    const items = itemsOf(await f.submit(`+${job()}${job()}${job('long')}${job()}`));
    assert.deepEqual(codes(items), ['201', '201', '201', '503'], 'the long job takes the other route');
    assert.equal(items[3]!.reason, 'No more jobs allowed: route small maxWaiting 2 reached (2 waiting)');
    assert.equal(items[3]!.id, undefined, 'nothing made for a refused item');
    // Another user's next request is refused too: the limit is the route's, not the user's;
    // its reason names counts only, never whose jobs wait.
    const next = itemsOf(await f.submit(one(), HB));
    assert.equal(next[0]!['status-code'], '503');
    assert.doesNotMatch(next[0]!.reason, /Alice/);
    assert.equal(
      f.store.routeCountsByFqan('small', ['ACCEPTED', 'PREPARING']).get(''),
      2,
      'the refused items were not stored',
    );

    // A job handed to the batch system no longer waits: its place is free.
    const first = f.store.get(items[0]!.id!)!;
    assert.ok(f.store.update(first, { state: 'INLRMS', restState: 'QUEUING' }));
    const freed = itemsOf(await f.submit(many(2)));
    assert.deepEqual(codes(freed), ['201', '503']);
    // A job still preparing (pending or not) waits.
    const second = f.store.get(items[1]!.id!)!;
    assert.ok(f.store.update(second, { state: 'PREPARING', pending: true, restState: 'PREPARED' }));
    assert.equal(itemsOf(await f.submit(one()))[0]!['status-code'], '503');
  } finally {
    await f.close();
  }
});

test("maxWaitingPerVo holds one VO's jobs within the route, not another VO's", async () => {
  const routes = routesOf([{ name: 'grid', match: {}, maxWaitingPerVo: 2, maxWaiting: 4 }]);
  const f = await jobsFixture({ routes: () => routes });
  try {
    assert.deepEqual(codes(itemsOf(await f.submit(many(1), ATLAS))), ['201']);
    // Another atlas member (other FQAN of the same VO) shares the VO's places.
    const atlas = itemsOf(await f.submit(many(2), ATLAS_B));
    assert.deepEqual(codes(atlas), ['201', '503']);
    assert.equal(
      atlas[1]!.reason,
      'No more jobs allowed: route grid maxWaitingPerVo 2 reached for VO atlas (2 waiting)',
    );
    assert.deepEqual(codes(itemsOf(await f.submit(many(2), CMS))), ['201', '201'], 'cms has its own');
    // The route's own limit (4) is reached now, whatever the VO; a job with no VO counts under none.
    const none = itemsOf(await f.submit(one()));
    assert.equal(none[0]!.reason, 'No more jobs allowed: route grid maxWaiting 4 reached (4 waiting)');
  } finally {
    await f.close();
  }
});

test('a job with no VO is held under the empty VO, named as (none)', async () => {
  const f = await jobsFixture({ routes: () => routesOf([{ name: 'r', match: {}, maxWaitingPerVo: 1 }]) });
  try {
    const items = itemsOf(await f.submit(many(2)));
    assert.deepEqual(codes(items), ['201', '503']);
    assert.equal(items[1]!.reason, 'No more jobs allowed: route r maxWaitingPerVo 1 reached for VO (none) (1 waiting)');
    assert.deepEqual(codes(itemsOf(await f.submit(many(1), CMS))), ['201']);
  } finally {
    await f.close();
  }
});

test('instances are trimmed to the room a route has left; an instances_min that does not fit is refused', async () => {
  const f = await jobsFixture({ routes: () => routesOf([{ name: 'r', match: {}, maxWaiting: 3 }]) });
  try {
    const two = itemsOf(await f.submit(SINGLE, HA, '1.1', '&instances=2'));
    assert.deepEqual(codes(two), ['201', '201']);
    const trimmed = itemsOf(await f.submit(SINGLE, HA, '1.1', '&instances=4&instances_min=1'));
    assert.deepEqual(codes(trimmed), ['201'], 'one place left');
    const none = itemsOf(await f.submit(SINGLE, HA, '1.1', '&instances=2&instances_min=2'));
    assert.deepEqual(codes(none), ['503']);
  } finally {
    await f.close();
  }
});

test('concurrent submissions never take more places than the route has', async () => {
  const f = await jobsFixture({ routes: () => routesOf([{ name: 'r', match: {}, maxWaiting: 5 }]) });
  try {
    const answers = await Promise.all([1, 2, 3, 4].map(() => f.submit(many(3))));
    const ids = answers.flatMap((a) => itemsOf(a).flatMap((i) => (i.id === undefined ? [] : [i.id])));
    assert.equal(ids.length, 5, 'exactly the limit created');
    assert.equal(jobsOfRoute(f, ids), 5);
  } finally {
    await f.close();
  }
});

test('the count reads the route through its index, not every job', async () => {
  const f = await jobsFixture({ routes: () => routesOf([{ name: 'r', match: {}, maxWaiting: 5 }]) });
  try {
    for (const pending of [undefined, false]) {
      const plan = (
        f.db.prepare(`EXPLAIN QUERY PLAN ${routeCountsSql(['ACCEPTED', 'PREPARING'], pending)}`).all('r') as {
          detail: string;
        }[]
      )
        .map((r) => r.detail)
        .join('; ');
      assert.match(plan, /USING INDEX jobs_route_state/, plan);
    }
  } finally {
    await f.close();
  }
});
