// A released pool account passes to another identity only once its cleanup has ended
// (src/authz/pool-leases.ts with a `clean` function): meanwhile it is nobody's and not
// free; a cleanup that fails keeps it out until a later sweep succeeds; one cut short by
// a restart runs again. The cleanup here is a function the test settles, so the order can
// be checked exactly; the real one, with real accounts, is test/accounts/account-cleanup.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { CLEANING, PoolLeases } from '../../src/authz/pool-leases.js';
import { until } from '../lrms/backend.case.js';

const DAY_MS = 86_400_000;
const pool = { accounts: ['p1'], idleMs: DAY_MS };

let dir: string;
before(() => (dir = mkdtempSync(join(tmpdir(), 'ceres-pool-cleanup-'))));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Cleanups the test settles by hand. */
class Cleanups {
  readonly asked: string[] = [];
  readonly ended: { account: string; error?: unknown }[] = [];
  #settle: { ok: () => void; fail: (e: Error) => void }[] = [];
  readonly clean = (account: string): Promise<void> => {
    this.asked.push(account);
    return new Promise<void>((ok, fail) => this.#settle.push({ ok, fail }));
  };
  readonly onCleaned = (account: string, error?: unknown): void => {
    this.ended.push(error === undefined ? { account } : { account, error });
  };
  succeed(): void {
    this.#settle.shift()?.ok();
  }
  fail(why: string): void {
    this.#settle.shift()?.fail(new Error(why));
  }
}

function setup(name: string, clock: { t: number }, c?: Cleanups): { db: Db; l: PoolLeases } {
  const db = openDatabase(join(dir, `${name}.db`));
  const l = new PoolLeases(db, { now: () => clock.t, ...(c ? { clean: c.clean, onCleaned: c.onCleaned } : {}) });
  return { db, l };
}

describe('pool leases: cleanup before an account passes on', () => {
  it('the account passes to the next identity only after its cleanup succeeded', async () => {
    const clock = { t: 0 };
    const c = new Cleanups();
    const { db, l } = setup('succeeds', clock, c);
    const released: string[][] = [];
    l.onRelease = (a) => released.push([...a]);
    assert.equal(l.lease(pool, '/CN=a'), 'p1');
    clock.t = 2 * DAY_MS;
    assert.equal(l.lease(pool, '/CN=b'), undefined, 'not while it is being cleaned');
    assert.deepEqual(c.asked, ['p1']);
    assert.deepEqual(released, [['p1']], "the old identity's cached decision is dropped at once");
    assert.deepEqual(
      l.list().map((r) => [r.account, r.dn]),
      [['p1', CLEANING]],
    );
    assert.equal(l.lease(pool, '/CN=a'), undefined, 'nor to the old identity');
    c.succeed();
    await until('the cleanup to end', () => c.ended.length === 1);
    assert.deepEqual(c.ended, [{ account: 'p1' }]);
    assert.equal(l.lease(pool, '/CN=b'), 'p1');
    assert.deepEqual(c.asked, ['p1'], 'cleaned once');
    db.close();
  });

  it('a failed cleanup keeps the account out of the pool; a later sweep tries again', async () => {
    const clock = { t: 0 };
    const c = new Cleanups();
    const { db, l } = setup('fails', clock, c);
    assert.equal(l.lease(pool, '/CN=a'), 'p1');
    clock.t = 2 * DAY_MS;
    assert.equal(l.lease(pool, '/CN=b'), undefined);
    c.fail('a process survived');
    await until('the cleanup to end', () => c.ended.length === 1);
    assert.match(String(c.ended[0]?.error), /a process survived/);
    assert.equal(l.lease(pool, '/CN=b'), undefined, 'still out, and no new attempt before the sweep interval');
    assert.equal(c.asked.length, 1);
    clock.t += 10_000;
    assert.equal(l.lease(pool, '/CN=b'), undefined, 'the sweep starts the cleanup again');
    assert.equal(c.asked.length, 2);
    clock.t += 10_000;
    assert.equal(l.lease(pool, '/CN=b'), undefined);
    assert.equal(c.asked.length, 2, 'never two cleanups of one account at a time');
    c.succeed();
    await until('the second cleanup to end', () => c.ended.length === 2);
    assert.equal(l.lease(pool, '/CN=b'), 'p1');
    db.close();
  });

  it('a cleanup cut short by a restart runs again at the next start; without a cleaner the account is free', async () => {
    const clock = { t: 0 };
    const first = setup('restart', clock, new Cleanups());
    assert.equal(first.l.lease(pool, '/CN=a'), 'p1');
    clock.t = 2 * DAY_MS;
    assert.equal(first.l.lease(pool, '/CN=b'), undefined);
    first.db.close(); // the service stops while the cleanup runs
    const c = new Cleanups();
    const again = setup('restart', clock, c);
    assert.deepEqual(c.asked, ['p1'], 'started again at construction');
    assert.equal(again.l.lease(pool, '/CN=b'), undefined);
    c.succeed();
    await until('the cleanup to end', () => c.ended.length === 1);
    assert.equal(again.l.lease(pool, '/CN=b'), 'p1');
    again.db.close();

    const other = setup('restart-plain', clock, new Cleanups());
    other.l.lease(pool, '/CN=a');
    clock.t += 2 * DAY_MS;
    assert.equal(other.l.lease(pool, '/CN=b'), undefined);
    other.db.close();
    const plain = setup('restart-plain', clock);
    assert.equal(plain.l.lease(pool, '/CN=b'), 'p1', 'a service without a cleaner ran no job as the account');
    plain.db.close();
  });

  it('a cleanup that ends after the database closed leaves the row for the next start', async () => {
    const clock = { t: 0 };
    const c = new Cleanups();
    const { db, l } = setup('closed', clock, c);
    l.lease(pool, '/CN=a');
    clock.t = 2 * DAY_MS;
    assert.equal(l.lease(pool, '/CN=b'), undefined);
    db.close();
    c.succeed();
    await until('the cleanup to end', () => c.ended.length === 1);
    assert.ok(c.ended[0]?.error !== undefined, 'reported, not thrown');
    const reopened = openDatabase(join(dir, 'closed.db'));
    const rows = reopened.prepare('SELECT account, dn FROM account_leases').all();
    assert.deepEqual(rows, [{ account: 'p1', dn: CLEANING }]);
    reopened.close();
  });
});
