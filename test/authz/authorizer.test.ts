// The decision with real parts: SQLite pool leases (persisted, one account per DN,
// idle release only without jobs holding a session), grid-mapfiles re-read when they
// change (at most once per check interval), mapping order, and the reasons of 403s.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { Authorizer, type Grant } from '../../src/authz/authorizer.js';
import { PoolLeases } from '../../src/authz/pool-leases.js';
import { buildConfig } from '../../src/config/load.js';
import { isCeError } from '../../src/errors/ce-error.js';
import type { AuthzSubject } from '../../src/authz/subject.js';
import { newJobRow } from '../helpers/new-job.js';

const DAY_MS = 86_400_000;
const cert = (dn: string, fqans: string[] = []): AuthzSubject => ({
  kind: 'x509',
  dn,
  issuerDn: '/CN=CA',
  fqans,
  parsedFqans: fqans.map((f) => ({ groups: f.split('/').slice(1) })),
});

let dir: string;
before(() => (dir = mkdtempSync(join(tmpdir(), 'ceres-authz-'))));
after(() => rmSync(dir, { recursive: true, force: true }));

function setup(raw: Record<string, unknown>, name: string, clock = { t: 1_000_000 }) {
  const cfg = buildConfig(raw);
  const db = openDatabase(join(dir, `${name}.db`));
  const a = new Authorizer(cfg.authorization!, cfg.mapping, cfg.cluster.queues, db, { now: () => clock.t });
  return { a, db, clock, cfg };
}

function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    assert.ok(isCeError(e), String(e));
    assert.equal(e.statusCode, 403);
    return { code: e.code, message: e.message };
  }
  assert.fail('not refused');
}

describe('authorizer', () => {
  it('allowed, not allowed, and no group at all; reasons name the groups', () => {
    const { a, db } = setup(
      {
        authorization: {
          groups: [
            { name: 'admins', match: [{ subject: '/CN=admin' }] },
            { name: 'users', match: [{ subjectPattern: '/CN=user*' }] },
          ],
          allow: ['users'],
        },
      },
      'allow',
    );
    const g: Grant = a.authorize(cert('/CN=user1'), '/CN=user1');
    assert.deepEqual(g, { groups: ['users'] }, 'no mapping configured: nobody mapped');
    let r = refusal(() => a.authorize(cert('/CN=admin'), '/CN=admin'));
    assert.equal(r.code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
    assert.match(r.message, /\(admins\) is allowed/);
    r = refusal(() => a.authorize(cert('/CN=stranger'), '/CN=stranger'));
    assert.match(r.message, /matches no authorization group/);
    db.close();
  });

  it('mapping order: the first entry of one of the caller groups that yields an account', () => {
    const gm = join(dir, 'order-gm');
    writeFileSync(gm, '"/CN=listed" listed_acct\n');
    const { a, db } = setup(
      {
        authorization: {
          groups: [
            { name: 'all', match: [{ all: true }] },
            { name: 'atlas', match: [{ voms: '/atlas' }] },
            { name: 'none', match: [{ subject: '/CN=nobody' }] },
          ],
          allow: ['all'],
        },
        mapping: [
          { group: 'none', account: 'never' },
          { group: 'all', gridMapFile: gm },
          { group: 'atlas', account: 'atlasacct' },
          { group: 'all', pool: { accounts: ['p1'] } },
        ],
        accounts: { shared: ['atlasacct'] },
      },
      'order',
    );
    assert.equal(a.authorize(cert('/CN=listed', ['/atlas']), '/CN=listed').localAccount, 'listed_acct');
    assert.equal(a.authorize(cert('/CN=vo', ['/atlas']), '/CN=vo').localAccount, 'atlasacct');
    assert.equal(a.authorize(cert('/CN=other'), '/CN=other').localAccount, 'p1');
    const r = refusal(() => a.authorize(cert('/CN=late'), '/CN=late'));
    assert.equal(r.code, 'CE_ERR_AUTHZ_POOL_EXHAUSTED');
    assert.match(r.message, /no grid-mapfile line.*all 1 pool accounts are leased/);
    db.close();
  });

  it('allowed but no mapping entry for its groups: 403 NO_MAPPING', () => {
    const { a, db } = setup(
      {
        authorization: {
          groups: [
            { name: 'a', match: [{ all: true }] },
            { name: 'b', match: [{ subject: '/CN=b' }] },
          ],
          allow: ['a'],
        },
        mapping: [{ group: 'b', account: 'bacct' }],
      },
      'nomap',
    );
    const r = refusal(() => a.authorize(cert('/CN=x'), '/CN=x'));
    assert.equal(r.code, 'CE_ERR_AUTHZ_NO_MAPPING');
    assert.equal(a.authorize(cert('/CN=b'), '/CN=b').localAccount, 'bacct');
    db.close();
  });

  it('queues: a caller gets the queues that allow one of its groups or allow everybody', () => {
    const { a, db } = setup(
      {
        authorization: {
          groups: [
            { name: 'x', match: [{ subject: '/CN=x' }] },
            { name: 'y', match: [{ subject: '/CN=y' }] },
          ],
          allow: ['x', 'y'],
        },
        cluster: { queues: [{ name: 'open' }, { name: 'xonly', allow: ['x'] }, { name: 'yonly', allow: ['y'] }] },
      },
      'queues',
    );
    assert.deepEqual(a.authorize(cert('/CN=x'), '/CN=x').queues, ['open', 'xonly']);
    assert.deepEqual(a.authorize(cert('/CN=y'), '/CN=y').queues, ['open', 'yonly']);
    db.close();
  });

  it('a grid-mapfile edit applies after the check interval, without a restart; a removed file grants nothing', () => {
    const gm = join(dir, 'reload-gm');
    writeFileSync(gm, '"/CN=a" acct_a\n');
    const { a, db, clock } = setup(
      {
        authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gm }] }], allow: ['local'] },
        mapping: [{ group: 'local', gridMapFile: gm }],
      },
      'reload',
    );
    assert.equal(a.authorize(cert('/CN=a'), '/CN=a').localAccount, 'acct_a');
    assert.equal(refusal(() => a.authorize(cert('/CN=b'), '/CN=b')).code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
    writeFileSync(gm, '"/CN=a" acct_a2\n"/CN=b" acct_b\n');
    clock.t += 500;
    assert.equal(a.authorize(cert('/CN=a'), '/CN=a').localAccount, 'acct_a', 'not re-checked within the interval');
    clock.t += 2000;
    assert.equal(a.authorize(cert('/CN=a'), '/CN=a').localAccount, 'acct_a2');
    assert.equal(a.authorize(cert('/CN=b'), '/CN=b').localAccount, 'acct_b');
    rmSync(gm);
    clock.t += 2000;
    assert.equal(refusal(() => a.authorize(cert('/CN=a'), '/CN=a')).code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
    writeFileSync(gm, '"/CN=a" back\n');
    clock.t += 2000;
    assert.equal(a.authorize(cert('/CN=a'), '/CN=a').localAccount, 'back');
    db.close();
  });
});

describe('pool leases', () => {
  const pool = { accounts: ['p1', 'p2'], idleMs: 10 * DAY_MS };
  const open = (name: string): Db => openDatabase(join(dir, `${name}.db`));

  it('one account per DN, the same one again, persisted across a reopen; exhausted answers undefined', () => {
    let db = open('persist');
    let l = new PoolLeases(db, { now: () => 1000 });
    assert.equal(l.lease(pool, '/CN=a'), 'p1');
    assert.equal(l.lease(pool, '/CN=b'), 'p2');
    assert.equal(l.lease(pool, '/CN=a'), 'p1');
    assert.equal(l.lease(pool, '/CN=c'), undefined);
    db.close();
    db = open('persist');
    l = new PoolLeases(db, { now: () => 2000 });
    assert.equal(l.lease(pool, '/CN=b'), 'p2');
    assert.equal(l.lease(pool, '/CN=a'), 'p1');
    assert.deepEqual(
      l
        .list()
        .map((r) => [r.account, r.dn])
        .sort(),
      [
        ['p1', '/CN=a'],
        ['p2', '/CN=b'],
      ],
    );
    db.close();
  });

  it('an idle lease is released when the pool needs an account, not while a job of the account keeps its session', () => {
    const db = open('idle');
    const store = new JobStore(db);
    let t = 0;
    const l = new PoolLeases(db, { now: () => t, touchEveryMs: 1000 });
    const released: string[][] = [];
    l.onRelease = (a) => released.push([...a]);
    assert.equal(l.lease(pool, '/CN=a'), 'p1');
    assert.equal(l.lease(pool, '/CN=b'), 'p2');
    store.insertMany([
      newJobRow('job1', '/CN=b', {
        state: 'FINISHED',
        restState: 'FINISHED',
        queue: 'main',
        raw: '',
        createdAt: 0,
        localAccount: 'p2',
      }),
    ]);
    t = 5 * DAY_MS;
    l.touch('p1'); // a request from /CN=a
    t = 12 * DAY_MS;
    assert.equal(l.lease(pool, '/CN=c'), undefined, 'p1 used 7 days ago, p2 has a finished job with its session');
    store.update(store.get('job1')!, { restState: 'WIPED' });
    assert.equal(l.lease(pool, '/CN=c'), undefined, 'an exhausted pool looks for idle leases at most every 10 s');
    t += 10_000;
    assert.equal(l.lease(pool, '/CN=c'), 'p2', 'the wiped job no longer holds p2');
    assert.deepEqual(released, [['p2']]);
    t = 16 * DAY_MS;
    assert.equal(l.lease(pool, '/CN=d'), 'p1');
    assert.equal(l.lease(pool, '/CN=a'), undefined, 'a lost its idle lease; the pool is full again');
    db.close();
  });

  it('leases of accounts no configured pool holds any more are dropped at start', () => {
    const db = open('dropped');
    new PoolLeases(db).lease({ accounts: ['old1', 'kept'], idleMs: DAY_MS }, '/CN=a');
    new PoolLeases(db).lease({ accounts: ['kept'], idleMs: DAY_MS }, '/CN=b');
    db.close();
    const dropped: string[][] = [];
    const cfg = buildConfig({
      authorization: { groups: [{ name: 'g', match: [{ all: true }] }], allow: ['g'] },
      mapping: [{ group: 'g', pool: { accounts: ['kept', 'new1'] } }],
    });
    const db2 = open('dropped');
    const a = new Authorizer(cfg.authorization!, cfg.mapping, cfg.cluster.queues, db2, {
      onLeasesDropped: (x) => dropped.push([...x]),
    });
    assert.deepEqual(dropped, [['old1']]);
    assert.deepEqual(
      a.leases().map((r) => [r.account, r.dn]),
      [['kept', '/CN=b']],
    );
    assert.equal(a.authorize(cert('/CN=a'), '/CN=a').localAccount, 'new1');
    db2.close();
  });

  it('touches are written at most once per interval', () => {
    const db = open('touch');
    let t = 0;
    const l = new PoolLeases(db, { now: () => t, touchEveryMs: 60_000 });
    l.lease(pool, '/CN=a');
    t = 30_000;
    l.touch('p1');
    assert.equal(l.list()[0]!.lastUsed, 0);
    t = 61_000;
    l.touch('p1');
    assert.equal(l.list()[0]!.lastUsed, 61_000);
    db.close();
  });
});
