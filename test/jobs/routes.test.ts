// Routes (src/jobs/routes.ts): the first route whose every condition holds takes the job;
// each route before it says why not; the schema refuses batch values that could be options.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from '../../src/config/load.js';
import {
  chooseRoute,
  isCatchAll,
  jobRoute,
  listRoutes,
  routeMiss,
  routeProblems,
  type RouteFacts,
} from '../../src/jobs/routes.js';
import { CONFIG_CHECKS } from '../../src/service/config-checks.js';

const config = buildConfig({
  cluster: { queues: [{ name: 'main' }, { name: 'long' }], runtimeEnvironments: [{ name: 'ENV/PROXY' }] },
  routes: [
    { name: 'atlas-prod', match: { fqans: ['/atlas/Role=production'] }, partition: 'short', account: 'vo_a' },
    { name: 'big', match: { minSlots: 8, queues: ['long'] }, partition: 'long', qos: 'low' },
    { name: 'short-jobs', match: { maxWallTimeSeconds: 3600, maxMemoryBytes: 2 ** 30 }, partition: 'short' },
    { name: 'tokens', match: { tokenGroups: ['/cms'], tokenScopes: ['compute.create'] }, qos: 'tok' },
    { name: 'proxy-rte', match: { runtimeEnvironments: ['ENV/PROXY'], groups: ['ops'] }, extraBatchArgs: ['--nice=5'] },
  ],
});

const facts = (over: Partial<RouteFacts> = {}): RouteFacts => ({
  groups: [],
  fqans: [],
  tokenGroups: [],
  tokenScopes: [],
  queue: 'main',
  slots: 1,
  runtimeEnvironments: [],
  ...over,
});

test('the first matching route takes the job, and every route before it says why not', () => {
  const d = chooseRoute(config.routes, facts({ queue: 'long', slots: 16, fqans: ['/atlas'] }));
  assert.equal(d.route?.name, 'big');
  assert.deepEqual(d.misses, [{ name: 'atlas-prod', why: 'FQANs /atlas match none of /atlas/Role=production' }]);
  const prod = chooseRoute(config.routes, facts({ fqans: ['/atlas/prod/Role=production'] }));
  assert.equal(prod.route?.name, 'atlas-prod', 'the voms rule: a subgroup with the role');
  assert.deepEqual(jobRoute(prod.route), { name: 'atlas-prod', partition: 'short', account: 'vo_a' });
});

test('a job matching no route gets each reason, in order', () => {
  const d = chooseRoute(
    config.routes,
    facts({ queue: 'long', slots: 2, fqans: ['/cms/Role=production'], groups: ['users'] }),
  );
  assert.equal(d.route, undefined);
  assert.deepEqual(
    d.misses.map((m) => m.why),
    [
      'FQANs /cms/Role=production match none of /atlas/Role=production',
      '2 slots < 8',
      'no wall time asked (at most 3600 s)',
      'token groups (none) not among /cms',
      'groups users not among ops',
    ],
  );
});

test('each limit of the description is checked on its own side', () => {
  const short = config.routes[2]!;
  assert.equal(routeMiss(short, facts({ wallTimeSeconds: 3600 })), undefined, 'at the limit');
  assert.equal(routeMiss(short, facts({ wallTimeSeconds: 3601 })), 'wall time 3601 s > 3600 s');
  assert.equal(
    routeMiss(short, facts({ wallTimeSeconds: 60, memoryBytes: 2 ** 30 + 1 })),
    `memory ${2 ** 30 + 1} B > ${2 ** 30} B`,
  );
  const big = config.routes[1]!;
  assert.equal(routeMiss(big, facts({ slots: 8, queue: 'main' })), 'queue main not among long');
  const tokens = config.routes[3]!;
  assert.equal(
    routeMiss(tokens, facts({ tokenGroups: ['/cms'], tokenScopes: ['compute.read'] })),
    'token scopes compute.read not among compute.create',
  );
  assert.equal(routeMiss(tokens, facts({ tokenGroups: ['/cms', '/x'], tokenScopes: ['compute.create'] })), undefined);
  const rte = config.routes[4]!;
  assert.equal(routeMiss(rte, facts({ groups: ['ops'] })), 'runtime environments (none) not among ENV/PROXY');
  assert.equal(routeMiss(rte, facts({ groups: ['ops'], runtimeEnvironments: ['ENV/PROXY'] })), undefined);
});

test('a malformed FQAN of the caller matches no rule, and a route without conditions takes all', () => {
  assert.equal(
    routeMiss(config.routes[0]!, facts({ fqans: ['atlas/Role=production'] })),
    'FQANs atlas/Role=production match none of /atlas/Role=production',
  );
  const all = buildConfig({
    routes: [
      { name: 'all', match: {} },
      { name: 'after', match: { groups: ['x'] } },
    ],
  }).routes;
  assert.equal(isCatchAll(all[0]!), true);
  assert.equal(isCatchAll(all[1]!), false);
  assert.equal(chooseRoute(all, facts()).route?.name, 'all');
});

test('the routes are listed in order for the publishers, and none by default', () => {
  assert.deepEqual(
    listRoutes(config).map((r) => r.name),
    ['atlas-prod', 'big', 'short-jobs', 'tokens', 'proxy-rte'],
  );
  assert.deepEqual(listRoutes(buildConfig({})), []);
});

test('a partition, account or QoS that could be read as an option or a second word is refused', () => {
  for (const [key, value] of [
    ['partition', 'short --qos=high'],
    ['account', '--account=root'],
    ['qos', '-q'],
    ['partition', 'a;b'],
    ['account', ''],
  ] as const) {
    assert.throws(
      () => buildConfig({ routes: [{ name: 'r', match: {}, [key]: value }] }),
      /routes/,
      `${key}=${JSON.stringify(value)}`,
    );
  }
  assert.throws(() => buildConfig({ routes: [{ name: 'r', match: { slots: 3 } }] }), /routes/, 'unknown condition');
  assert.throws(
    () => buildConfig({ routes: [{ name: 'r', match: { fqans: ['atlas'] } }] }),
    /routes/,
    'FQAN without /',
  );
  assert.throws(() => buildConfig({ routes: [{ match: {} }] }), /routes/, 'no name');
});

test('config check: a route after a catch-all is never reached, a name twice and an unknown queue are errors', async () => {
  const c = buildConfig({
    cluster: { queues: [{ name: 'main' }] },
    routes: [
      { name: 'a', match: { queues: ['main', 'nosuch'] } },
      { name: 'all', match: {} },
      { name: 'a', match: { groups: ['x'] } },
    ],
  });
  assert.deepEqual(routeProblems(c.routes, ['main']), [
    { key: 'routes.0.match.queues', message: 'route a: nosuch is no configured queue' },
    { key: 'routes.2.name', message: 'route name a is used twice' },
    { key: 'routes.2', message: 'route a is never reached: route all before it takes every job', warning: true },
  ]);
  assert.deepEqual(routeProblems(config.routes, ['main', 'long']), [], 'the sample routes are sound');
  const check = CONFIG_CHECKS.find((k) => k.name === 'routes');
  assert.ok(check, 'in the list config check and the start run');
  const problems = await check.run(c, { root: true, resolver: undefined as never, env: {} });
  assert.equal(problems.length, 3);
});
