// What `config check` says of the routes' limits (src/jobs/route-limits.ts): a limit that
// can never hold and a share naming no route are warnings, each under its key; sound
// limits say nothing. Before these checks, all of them passed silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from '../../src/config/load.js';
import { routeLimitProblems } from '../../src/jobs/route-limits.js';
import { CONFIG_CHECKS } from '../../src/service/config-checks.js';

test('limits that can never hold and shares naming no route are warnings under their keys', async () => {
  const c = buildConfig({
    engine: { maxRunningJobs: 10 },
    routes: [
      { name: 'a', match: { groups: ['a'] }, maxWaiting: 5, maxWaitingPerVo: 6, maxRunning: 11 },
      { name: 'b', match: {}, maxRunning: 2, maxRunningPerVo: 3 },
    ],
    fairShare: { by: 'route', shares: { a: 2, nosuch: 3 } },
  });
  assert.deepEqual(routeLimitProblems(c), [
    {
      key: 'routes.0.maxWaitingPerVo',
      message: 'route a: maxWaitingPerVo 6 above maxWaiting 5 is never reached',
      warning: true,
    },
    {
      key: 'routes.0.maxRunning',
      message: 'route a: maxRunning 11 above engine.maxRunningJobs 10 is never reached',
      warning: true,
    },
    {
      key: 'routes.1.maxRunningPerVo',
      message: 'route b: maxRunningPerVo 3 above maxRunning 2 is never reached',
      warning: true,
    },
    {
      key: 'fairShare.shares.nosuch',
      message: 'fairShare.shares names nosuch, which is no configured route',
      warning: true,
    },
  ]);
  const check = CONFIG_CHECKS.find((k) => k.name === 'routes');
  assert.ok(check);
  const found = await check.run(c, { root: true, resolver: undefined as never, env: {} });
  assert.equal(found.filter((p) => p.warning === true).length, 4, 'config check and the start run them');
});

test('sound limits, and shares by VO (whose names are not routes), say nothing', () => {
  const c = buildConfig({
    engine: { maxRunningJobs: 0 },
    routes: [{ name: 'a', match: {}, maxWaiting: 5, maxWaitingPerVo: 5, maxRunning: 100, maxRunningPerVo: 1 }],
    fairShare: { by: 'vo', shares: { atlas: 3 } },
  });
  assert.deepEqual(routeLimitProblems(c), []);
});

test('a waiting limit below 1 is refused when the configuration is read', () => {
  assert.throws(() => buildConfig({ routes: [{ name: 'a', match: {}, maxWaiting: 0 }] }), /maxWaiting/);
  assert.throws(() => buildConfig({ routes: [{ name: 'a', match: {}, maxWaitingPerVo: -1 }] }), /maxWaitingPerVo/);
});
