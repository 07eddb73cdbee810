// Routes published as GLUE2 shares (docs/routes.md, docs/info-document.md): one share per
// route and queue it takes, with its MappingPolicies, MappingQueue, limits and counts; from
// the configuration (route-shares.ts) and, with the live source, from the jobs in the store.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildInfoDocument } from '../../src/info/info-document.js';
import { routeShares } from '../../src/info/route-shares.js';
import { buildConfig } from '../../src/config/load.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import type { XmlElement } from '../../src/doc/element.js';
import { all, text, texts } from './tree.js';
import { HOST, liveSource, snapshot } from './fixtures.js';
import { newJobRow } from '../helpers/new-job.js';

const CS = 'Domains/AdminDomain/Services/ComputingService';

const config = buildConfig({
  cluster: { queues: [{ name: 'main' }, { name: 'long', maxWallTimeSeconds: 7200 }] },
  authorization: {
    groups: [
      { name: 'cms', match: [{ voms: '/cms' }, { voms: '/cms/higgs' }] },
      { name: 'all', match: [{ all: true }] },
    ],
    allow: ['all'],
  },
  routes: [
    {
      name: 'atlas-prod',
      match: { fqans: ['/atlas/Role=production', '/atlas/prod'], queues: ['main'], maxWallTimeSeconds: 3600 },
      partition: 'short',
      account: 'vo_a',
      maxRunning: 5,
    },
    { name: 'cms', match: { groups: ['cms'], maxSlots: 8, maxMemoryBytes: 2 * 1024 ** 3 }, partition: 'long' },
    { name: 'rest', match: {} },
  ],
});

/** The share of `name` whose MappingQueue is `queue` (a route has one in each queue it takes). */
function shareOf(doc: XmlElement, name: string, queue: string): XmlElement {
  const found = all(doc, `${CS}/ComputingShare[Name=${name}]`).filter((s) => text(s, 'MappingQueue') === queue);
  assert.equal(found.length, 1, `one share ${name} of queue ${queue}`);
  return found[0]!;
}

const shareRows = (doc: XmlElement) =>
  all(doc, `${CS}/ComputingShare`).map((s) => [text(s, 'Name'), text(s, 'MappingQueue'), text(s, 'ID')]);

test('a share per route and queue it takes, after the queue own shares; IDs apart from queue and VO shares', () => {
  const shares = routeShares(config.routes, config.authorization, ['main', 'long'], () => undefined);
  const doc = buildInfoDocument(
    snapshot({ queues: [{ name: 'main', vos: ['atlas'] }, { name: 'long' }], routeShares: shares }),
  );
  assert.deepEqual(shareRows(doc), [
    ['main', 'main', `urn:ogf:ComputingShare:${HOST}:main`],
    ['main_atlas', 'main', `urn:ogf:ComputingShare:${HOST}:main_atlas`],
    ['atlas-prod', 'main', `urn:ogf:ComputingShare:${HOST}:route:atlas-prod:main`],
    ['cms', 'main', `urn:ogf:ComputingShare:${HOST}:route:cms:main`],
    ['rest', 'main', `urn:ogf:ComputingShare:${HOST}:route:rest:main`],
    ['long', 'long', `urn:ogf:ComputingShare:${HOST}:long`],
    ['cms', 'long', `urn:ogf:ComputingShare:${HOST}:route:cms:long`],
    ['rest', 'long', `urn:ogf:ComputingShare:${HOST}:route:rest:long`],
  ]);
  assert.equal(text(doc, `${CS}/Complexity`), 'endpoint=2,share=8,resource=1');
  // Every endpoint and the execution environment name every share, the route shares too.
  for (const ep of all(doc, `${CS}/ComputingEndpoint`))
    assert.equal(texts(ep, 'Associations/ComputingShareID').length, 8);
  assert.equal(
    texts(doc, `${CS}/ComputingManager/ExecutionEnvironments/ExecutionEnvironment/Associations/ComputingShareID`)
      .length,
    8,
  );
});

test("MappingPolicies: vo: rules of the route's FQANs (or of its groups' voms rules), VOMS: rules for narrower ones", () => {
  const shares = routeShares(config.routes, config.authorization, ['main', 'long'], () => undefined);
  const doc = buildInfoDocument(snapshot({ queues: [{ name: 'main' }, { name: 'long' }], routeShares: shares }));
  const share = (name: string, queue: string) => shareOf(doc, name, queue);
  const policies = (s: XmlElement) =>
    all(s, 'MappingPolicy').map((p) => [text(p, 'ID'), text(p, 'Scheme'), texts(p, 'Rule')]);
  assert.deepEqual(policies(share('atlas-prod', 'main')), [
    [`urn:ogf:MappingPolicy:${HOST}:route:atlas-prod:main:basic`, 'basic', ['vo:atlas']],
    [
      `urn:ogf:MappingPolicy:${HOST}:route:atlas-prod:main:glite`,
      'org.glite.standard',
      ['VOMS:/atlas/Role=production', 'VOMS:/atlas/prod'],
    ],
  ]);
  assert.deepEqual(policies(share('cms', 'long')), [
    [`urn:ogf:MappingPolicy:${HOST}:route:cms:long:basic`, 'basic', ['vo:cms']],
    [`urn:ogf:MappingPolicy:${HOST}:route:cms:long:glite`, 'org.glite.standard', ['VOMS:/cms/higgs']],
  ]);
  // A route that names no VO advertises to no VO in particular: no policy (GLUE2 needs a Rule).
  assert.deepEqual(policies(share('rest', 'main')), []);
  assert.equal(text(share('atlas-prod', 'main'), 'Description'), 'route atlas-prod (partition short)');
  assert.equal(text(share('rest', 'main'), 'Description'), 'route rest');
});

test("limits: the tighter of the queue's and the route's; none made up where neither sets one", () => {
  const shares = routeShares(config.routes, config.authorization, ['main', 'long'], () => undefined);
  const doc = buildInfoDocument(
    snapshot({
      queues: [
        { name: 'main', maxWallTimeSeconds: 86400, maxRunningJobs: 100, maxSlotsPerJob: 4 },
        { name: 'long', maxWallTimeSeconds: 7200 },
      ],
      routeShares: shares,
    }),
  );
  const s = (name: string, queue: string) => shareOf(doc, name, queue);
  const limits = (e: XmlElement) =>
    ['MaxWallTime', 'MaxRunningJobs', 'MaxSlotsPerJob', 'MaxMainMemory'].map((n) => texts(e, n)[0]);
  assert.deepEqual(limits(s('atlas-prod', 'main')), ['3600', '5', '4', undefined]);
  assert.deepEqual(limits(s('cms', 'main')), ['86400', '100', '4', '2048']);
  assert.deepEqual(limits(s('cms', 'long')), ['7200', undefined, '8', '2048']);
  assert.deepEqual(limits(s('rest', 'long')), ['7200', undefined, undefined, undefined]);
});

test("counts: a route share counts the route's jobs in its queue; its batch figures are its partition's", () => {
  const shares = routeShares(config.routes, config.authorization, ['main', 'long'], (p) =>
    p === 'short'
      ? { freeSlots: 3, localRunningJobs: 7, localWaitingJobs: 11 }
      : p === 'long'
        ? { servingState: 'closed' }
        : undefined,
  );
  const doc = buildInfoDocument(
    snapshot(
      {
        queues: [
          { name: 'main', freeSlots: 1, localRunningJobs: 2, localWaitingJobs: 3 },
          { name: 'long', servingState: 'draining' },
        ],
        routeShares: shares,
      },
      [
        { gmState: 'INLRMS', lrmsState: 'R', queue: 'main', route: 'atlas-prod' },
        { gmState: 'INLRMS', lrmsState: 'R', queue: 'main', route: 'atlas-prod' },
        { gmState: 'INLRMS', lrmsState: 'Q', queue: 'main', route: 'atlas-prod' },
        { gmState: 'PREPARING', queue: 'main', route: 'atlas-prod' },
        { gmState: 'INLRMS', lrmsState: 'R', queue: 'main', route: 'cms' },
        { gmState: 'INLRMS', lrmsState: 'Q', queue: 'long', route: 'cms' },
        { gmState: 'INLRMS', lrmsState: 'R', queue: 'main' },
      ],
    ),
  );
  const s = (name: string, queue: string) => shareOf(doc, name, queue);
  const figures = (e: XmlElement) =>
    [
      'TotalJobs',
      'RunningJobs',
      'WaitingJobs',
      'StagingJobs',
      'FreeSlots',
      'LocalRunningJobs',
      'LocalWaitingJobs',
      'ServingState',
    ].map((n) => texts(e, n)[0]);
  assert.deepEqual(figures(s('main', 'main')), ['6', '4', '1', '1', '1', '2', '3', 'production']);
  assert.deepEqual(figures(s('atlas-prod', 'main')), ['4', '2', '1', '1', '3', '7', '11', 'production']);
  // Its partition is down: closed, and no slots of the queue's are offered for it.
  assert.deepEqual(figures(s('cms', 'main')), ['1', '1', '0', '0', '0', undefined, undefined, 'closed']);
  // The drained queue drains its routes, whatever their partition says.
  assert.deepEqual(figures(s('cms', 'long')), ['1', '0', '1', '0', '0', undefined, undefined, 'draining']);
  // A route without a partition of its own runs in the queue's: the queue's figures.
  assert.deepEqual(figures(s('rest', 'main')), ['0', '0', '0', '0', '1', '2', '3', 'production']);
});

test('a route whose queues condition names no configured queue has no share; no routes, no route shares', () => {
  const c = buildConfig({ routes: [{ name: 'r', match: { queues: ['gone'] } }] });
  assert.deepEqual(
    routeShares(c.routes, c.authorization, ['main'], () => undefined),
    [],
  );
  const doc = buildInfoDocument(snapshot({ routeShares: [] }));
  assert.deepEqual(shareRows(doc), [['main', 'main', `urn:ogf:ComputingShare:${HOST}:main`]]);
});

test('the live source publishes the configured routes and counts the routed jobs of the store per route', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-route-shares-'));
  const db = openDatabase(join(dir, 'db'));
  t.after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const store = new JobStore(db);
  const job = (id: string, queue: string, route?: string) =>
    newJobRow(id, 'o', { queue, format: 'adl', raw: '', createdAt: 1, ...(route ? { route: { name: route } } : {}) });
  store.insertMany([
    job('j1', 'main', 'atlas-prod'),
    job('j2', 'main', 'atlas-prod'),
    job('j3', 'long', 'cms'),
    job('j4', 'main'),
  ]);
  const source = liveSource(buildConfig({ ...config, stateDir: dir }), store);
  const doc = source.document();
  const pre = (name: string, queue: string) => text(shareOf(doc, name, queue), 'PreLRMSWaitingJobs');
  assert.equal(pre('main', 'main'), '3');
  assert.equal(pre('atlas-prod', 'main'), '2');
  assert.equal(pre('cms', 'long'), '1');
  assert.equal(pre('cms', 'main'), '0');
  assert.equal(pre('rest', 'main'), '0');
});
