/**
 * The job list's store queries and address checks without a browser: each order walks its
 * own index (no sort step), pages are complete and in order for every order, search and the
 * administrator filters, the name filled in for jobs stored before migration 16, and a clear
 * 400 for every malformed list address.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobPages, JOB_SORTS, sortValue, type JobQuery, type JobSort } from '../../src/store/job-pages.js';
import { afterOf, parseListQuery } from '../../src/api/web/job-list.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { databaseAtSchema } from '../helpers/old-database.js';

const STATES = ['ACCEPTING', 'RUNNING', 'FINISHED', 'FAILED'];

describe('job list queries', () => {
  let dir: string;
  let db: Db;
  let pages: JobPages;
  const N = 600;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-joblist-'));
    db = openDatabase(join(dir, 'ceres.db'));
    const ins = db.prepare(
      `INSERT INTO jobs (id, owner, owner_dn, name, state, rest_state, queue, format, description, raw, created_at, started_at, ended_at, exit_code, local_account, fqans, updated_at)
       VALUES (@id, @owner, @owner, @name, 'FINISHED', @rest, 'main', 'xrsl', '{}', '', @created, @started, @ended, @exit, @account, @fqans, 0)`,
    );
    db.transaction(() => {
      for (let i = 0; i < N; i++) {
        const ended = i % 4 === 0 ? null : 2_000_000 + ((i * 7919) % 1000); // equal end times: ties broken by id
        ins.run({
          id: `j${String(i).padStart(5, '0')}`,
          owner: i % 3 === 0 ? '/CN=bob' : '/CN=alice',
          // Names repeat (ties), some are empty, one holds markup.
          name: i % 5 === 0 ? '' : i === 7 ? '<script>alert(1)</script>' : `sim-${i % 37}`,
          rest: ended === null ? 'RUNNING' : i % 10 === 1 ? 'FAILED' : 'FINISHED',
          created: 1_000_000 + Math.floor(i / 2),
          started: 1_500_000,
          ended,
          exit: ended === null ? null : i % 10 === 1 ? 1 : 0,
          account: i % 2 === 0 ? 'pool001' : 'pool002',
          fqans: i % 3 === 1 ? JSON.stringify(['/atlas/Role=production', '/atlas']) : i % 3 === 2 ? '["/cms"]' : null,
        });
      }
    })();
    pages = new JobPages(db);
  });
  after(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Every page of `q` in turn, as the list's next links walk it. */
  const walk = (q: Omit<JobQuery, 'limit' | 'after'>, size = 17) => {
    const out: { id: string; v: number | string }[] = [];
    let afterKey: JobQuery['after'];
    for (;;) {
      const rows = pages.find({ ...q, after: afterKey, limit: size });
      for (const r of rows) out.push({ id: r.id, v: sortValue(q.sort ?? 'submitted', r) });
      if (rows.length < size) return out;
      const last = rows[rows.length - 1]!;
      afterKey = { value: sortValue(q.sort ?? 'submitted', last), id: last.id };
    }
  };

  for (const sort of Object.keys(JOB_SORTS) as JobSort[]) {
    it(`sorted by ${sort}: every job once, in order, on its index without a sort step`, () => {
      for (const owner of ['/CN=alice', undefined]) {
        const got = walk({ owner, sort });
        const expected = (
          db
            .prepare(`SELECT id FROM jobs ${owner === undefined ? '' : 'WHERE owner = ?'}`)
            .all(...(owner === undefined ? [] : [owner])) as { id: string }[]
        ).length;
        assert.equal(new Set(got.map((r) => r.id)).size, expected, `${sort} ${owner ?? 'all'}: every job once`);
        assert.equal(got.length, expected);
        const desc = JOB_SORTS[sort].desc;
        for (let i = 1; i < got.length; i++) {
          const [a, b] = [got[i - 1]!, got[i]!];
          const order = a.v === b.v ? (a.id < b.id ? -1 : 1) : a.v < b.v ? -1 : 1;
          assert.equal(order, desc ? 1 : -1, `${sort}: ${JSON.stringify(a)} before ${JSON.stringify(b)}`);
        }
        const s = JOB_SORTS[sort];
        const plan = db
          .prepare(
            `EXPLAIN QUERY PLAN SELECT id FROM jobs INDEXED BY ${owner === undefined ? s.all : s.own} WHERE ${owner === undefined ? '1' : "owner = 'x'"} AND rest_state = 'FAILED' ORDER BY ${s.expr} ${s.desc ? 'DESC' : 'ASC'}, id ${s.desc ? 'DESC' : 'ASC'} LIMIT 5`,
          )
          .all() as { detail: string }[];
        assert.ok(!plan.some((p) => /TEMP B-TREE/.test(p.detail)), `${sort}: ${JSON.stringify(plan)}`);
      }
    });
  }

  it('searches names (any case, any part) and id starts, within the owner', () => {
    const byName = walk({ owner: '/CN=alice', search: 'SIM-3' });
    assert.ok(byName.length > 0);
    for (const r of byName) {
      const row = db.prepare('SELECT name, owner FROM jobs WHERE id = ?').get(r.id) as { name: string; owner: string };
      assert.match(row.name, /^sim-3/);
      assert.equal(row.owner, '/CN=alice');
    }
    assert.deepEqual(
      walk({ owner: '/CN=alice', search: 'j0000' }).map((r) => r.id),
      ['j00008', 'j00007', 'j00005', 'j00004', 'j00002', 'j00001'],
    );
    assert.deepEqual(walk({ owner: '/CN=alice', search: '0000' }), [], 'an id matches from its start only');
    assert.deepEqual(
      walk({ search: '<script>' }).map((r) => r.id),
      ['j00007'],
    );
    assert.deepEqual(walk({ owner: '/CN=bob', search: 'j00001' }), [], "another owner's job is never found");
    assert.deepEqual(walk({ search: "%' OR 1=1 --" }), [], 'search text is a value, not SQL or a LIKE pattern');
  });

  it('filters by state, owner, account and VO (an FQAN of the VO or a group below it)', () => {
    const ids = (q: Omit<JobQuery, 'limit' | 'after'>) => walk(q).map((r) => r.id);
    const count = (where: string) =>
      (db.prepare(`SELECT count(*) AS n FROM jobs WHERE ${where}`).get() as { n: number }).n;
    assert.equal(ids({ state: 'FAILED' }).length, count("rest_state = 'FAILED'"));
    assert.equal(ids({ ownerDn: '/CN=bob' }).length, count("owner_dn = '/CN=bob'"));
    assert.equal(ids({ account: 'pool002' }).length, count("local_account = 'pool002'"));
    assert.equal(ids({ vo: 'atlas' }).length, count("fqans LIKE '%/atlas%'"));
    assert.equal(
      ids({ vo: 'cms', account: 'pool001' }).length,
      count("fqans = '[\"/cms\"]' AND local_account = 'pool001'"),
    );
    assert.deepEqual(ids({ vo: 'atl' }), [], 'a VO is matched whole, never as a prefix');
    assert.deepEqual(ids({ ownerDn: '/CN=nobody' }), []);
  });

  it('fills in the name of jobs stored before the name column, from their description', () => {
    const d = mkdtempSync(join(tmpdir(), 'ceres-joblist-old-'));
    try {
      const file = join(d, 'ceres.db');
      databaseAtSchema(file, 11, { id: 'old1', state: 'FINISHED', restState: 'FINISHED' });
      const old = new Database(file);
      old
        .prepare('UPDATE jobs SET description = ? WHERE id = ?')
        .run(JSON.stringify({ jobName: 'legacy <b>' }), 'old1');
      old
        .prepare(
          `INSERT INTO jobs (id, owner, state, pending, rest_state, queue, format, description, raw, created_at, updated_at, reruns_left) VALUES ('old2', '/CN=a', 'FINISHED', 0, 'FINISHED', '', 'xrsl', 'not json', 'x', 2, 2, 0)`,
        )
        .run();
      old.close();
      const db2 = openDatabase(file);
      const names = db2.prepare('SELECT id, name FROM jobs ORDER BY id').all();
      assert.deepEqual(names, [
        { id: 'old1', name: 'legacy <b>' },
        { id: 'old2', name: '' },
      ]);
      db2.close();
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('job list address', () => {
  const parse = (q: Record<string, string>, admin = false) => parseListQuery(q, STATES, admin);
  const refused = (q: Record<string, string>, re: RegExp, admin = false) =>
    assert.throws(
      () => parse(q, admin),
      (e: unknown) => isCeError(e) && e.statusCode === 400 && re.test(e.message),
      JSON.stringify(q),
    );

  it('takes search, state, sort and a page position made by the list itself', () => {
    const r = { id: 'j1', name: 'x "y"', createdAt: 5, endedAt: null } as never;
    const p = parse({ q: ' sim ', state: 'FAILED', sort: 'name', after: afterOf('name', r) });
    assert.deepEqual(p.params, {
      state: 'FAILED',
      q: 'sim',
      sort: 'name',
      user: undefined,
      account: undefined,
      vo: undefined,
    });
    assert.deepEqual(p.after, { value: 'x "y"', id: 'j1' });
    assert.deepEqual(parse({ after: afterOf(undefined, r) }).after, { value: 5, id: 'j1' });
    assert.deepEqual(parse({ user: '/O=Grid/CN=bob', vo: 'atlas', account: 'pool1' }, true).params.vo, 'atlas');
  });

  it('refuses each malformed part with a 400 that names it', () => {
    refused({ sort: 'owner' }, /sort: one of submitted, ended, name/);
    refused({ q: 'x'.repeat(201) }, /q: a search text of at most 200/);
    refused({ after: 'garbage' }, /after: not a page position/);
    refused({ after: Buffer.from('[1,"j1"]').toString('base64url'), sort: 'name' }, /after/);
    refused({ after: Buffer.from('["a","../x"]').toString('base64url'), sort: 'name' }, /after/);
    refused({ after: Buffer.from('[1e300,"j1"]').toString('base64url') }, /after/);
    refused({ after: 'A'.repeat(5000) }, /after/);
    refused({ user: '/CN=bob' }, /only site administrators/);
    refused({ vo: 'atlas' }, /only site administrators/);
    refused({ vo: "atlas' OR 1" }, /vo: a VO name/, true);
    refused({ account: 'a\nb' }, /account: one line/, true);
    assert.throws(
      () => parse({ state: 'NOPE' }),
      (e: unknown) => isCeError(e) && e.statusCode >= 400 && e.statusCode < 500,
    );
  });
});
