// action=info answers from the activity document cache (src/jobs/activity-cache.ts) are
// byte for byte what the records give now: after every change of the record, of its
// delegation's expiry, of the owner asking, after deletion, in every format.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bulkPieces } from '../../src/api/rest/jobs/render.js';
import { ActivityCache } from '../../src/jobs/activity-cache.js';
import { activityWriter } from '../../src/jobs/activity.js';
import { JobActions } from '../../src/jobs/job-actions.js';
import { emptyJobDescription } from '../../src/vocabulary/job-description.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import { newJobRow } from '../helpers/new-job.js';

const ALICE = '/DC=org/DC=test/CN=Alice';
const BOB = '/DC=org/DC=test/CN=Bob';
const FORMATS = ['json', 'xml', 'html'] as const;

describe('the activity document cache', async () => {
  const root = await mkdtemp(join(tmpdir(), 'ceres-info-cache-'));
  after(() => rm(root, { recursive: true, force: true }));
  const store = new JobStore(openDatabase(join(root, 'db')));
  const expiries = new Map<string, Date>([['d1', new Date('2036-01-01T00:00:00Z')]]);
  let lookups = 0;
  // A fixed clock: answers compared with each other carry the same CreationTime.
  const writer = () =>
    activityWriter(
      {
        hostname: 'ce.example.org',
        proxyExpiry: (d) => {
          lookups++;
          return expiries.get(d);
        },
      },
      1_800_000_000,
    );
  const engine = { jobsSubmitted: () => undefined, jobPoked: () => undefined };
  const cached = new JobActions(store, engine, writer, 3);
  const uncached = new JobActions(store, engine, writer, 0);
  const job = (id: string, owner: string, delegationId?: string): NewJob =>
    newJobRow(id, owner, {
      queue: 'main',
      delegationId: delegationId ?? null,
      delegationIds: delegationId === undefined ? [] : [delegationId],
      description: {
        ...emptyJobDescription('xrsl'),
        executable: '/bin/true',
        jobName: `name of ${id}`,
        ...(delegationId === undefined ? {} : { delegationId }),
      },
      createdAt: 1_795_000_000_000,
    });
  store.insertMany([job('a', ALICE, 'd1'), job('b', ALICE), job('c', ALICE), job('d', ALICE), job('e', BOB)]);

  const answer = (a: JobActions, owner: string, ids: string[], format: (typeof FORMATS)[number]): string =>
    [...bulkPieces(ids.map(a.infoOf(owner, ids, format)), format)].join('');
  /** The cached answer equals the one written from the records, in every format, twice (the second from the cache). */
  const same = (ids: string[], owner = ALICE, what = ''): string[] => {
    const out: string[] = [];
    for (const format of FORMATS)
      for (let i = 0; i < 2; i++) {
        const got = answer(cached, owner, ids, format);
        assert.equal(got, answer(uncached, owner, ids, format), `${what} ${format} #${i}`);
        out.push(got);
      }
    return out;
  };

  it('answers unchanged jobs from memory, the same bytes as from the records', () => {
    same(['a', 'b', 'a', 'zz', 'c'], ALICE, 'first');
    const before = lookups;
    let reads = 0;
    const getOwned = store.getOwned.bind(store);
    store.getOwned = (id, owner) => (reads++, getOwned(id, owner));
    try {
      const again = answer(cached, ALICE, ['a', 'b', 'c'], 'json');
      assert.equal(reads, 0, 'no record read for unchanged jobs');
      assert.equal(lookups - before, 1, 'one expiry lookup per delegation per answer');
      assert.equal(again, answer(uncached, ALICE, ['a', 'b', 'c'], 'json'));
    } finally {
      store.getOwned = getOwned;
    }
  });

  it('a changed record is written again', () => {
    const [json] = same(['a', 'b']);
    assert.ok(store.update(store.get('b')!, { state: 'FINISHED', restState: 'FINISHED', exitCode: 0 }));
    const [after] = same(['a', 'b'], ALICE, 'after the change');
    assert.notEqual(after, json);
    assert.match(after!, /"ExitCode":"0"/);
  });

  it("a renewed delegation's new expiry is published", () => {
    const [json] = same(['a']);
    expiries.set('d1', new Date('2037-06-01T12:00:00Z'));
    const [after] = same(['a'], ALICE, 'after the renewal');
    assert.notEqual(after, json);
    assert.match(after!, /"ProxyExpirationTime":"2037-06-01T12:00:00Z"/);
    expiries.delete('d1');
    assert.doesNotMatch(same(['a'], ALICE, 'after the removal')[0]!, /ProxyExpirationTime/);
  });

  it("another owner's job is not found, cached or not", () => {
    same(['e'], BOB);
    for (const format of FORMATS) assert.match(answer(cached, ALICE, ['e'], format), /404/);
    assert.equal(answer(cached, ALICE, ['e'], 'json'), answer(uncached, ALICE, ['e'], 'json'));
  });

  it('a deleted job is not found', () => {
    same(['c']);
    assert.ok(store.delete(store.get('c')!));
    for (const format of FORMATS) {
      const got = answer(cached, ALICE, ['c'], format);
      assert.equal(got, answer(uncached, ALICE, ['c'], format));
      assert.match(got, /Job not found/);
    }
  });

  it("a waiting job's kept document is used while its reason is the same, written anew once it changes", () => {
    let reason = 'held A';
    let calls = 0;
    const why = (j: { state: string }): string | undefined => (calls++, j.state === 'FINISHED' ? undefined : reason);
    const reasons = new JobActions(
      store,
      engine,
      () => activityWriter({ hostname: 'ce.example.org', waitReasons: () => why }, 1_800_000_000),
      10,
    );
    store.insertMany([job('w1', ALICE), job('w2', ALICE)]);
    const first = answer(reasons, ALICE, ['w1'], 'json');
    assert.match(first, /"Waiting: held A"/);
    const written = calls;
    assert.equal(answer(reasons, ALICE, ['w1'], 'json'), first);
    assert.equal(calls, written + 1, 'kept: its reason is asked once, nothing written');
    // Other jobs moved, this record did not: its reason now is another.
    reason = 'held B';
    const second = answer(reasons, ALICE, ['w1'], 'json');
    assert.match(second, /"Waiting: held B"/, 'not the document kept from before');
    assert.doesNotMatch(second, /held A/);
    const fresh = new JobActions(
      store,
      engine,
      () => activityWriter({ hostname: 'ce.example.org', waitReasons: () => why }, 1_800_000_000),
      0,
    );
    for (const format of ['xml', 'json'] as const)
      assert.equal(answer(reasons, ALICE, ['w1'], format), answer(fresh, ALICE, ['w1'], format), format);
    assert.ok(store.update(store.get('w2')!, { state: 'FINISHED', restState: 'FINISHED' }));
    const ended = answer(reasons, ALICE, ['w2'], 'json');
    const before = calls;
    assert.equal(answer(reasons, ALICE, ['w2'], 'json'), ended);
    assert.equal(calls, before, 'an ended job is answered as written, its reason not asked');
  });

  it('is bounded: least recently used out first', () => {
    const c = new ActivityCache(2);
    const e = (version: number) => ({ version, delegationId: null, expiryMs: undefined });
    c.set('x', e(1));
    c.set('y', e(1));
    assert.ok(c.get('x', 1));
    c.set('z', e(1));
    assert.equal(c.size, 2);
    assert.equal(c.get('y', 1), undefined, 'y was the least recently used');
    assert.ok(c.get('x', 1) && c.get('z', 1));
    assert.equal(c.get('x', 2), undefined, 'another version is a miss');
    assert.equal(c.get('x', 1), undefined, 'and the stale entry is gone');
    const off = new ActivityCache(0);
    off.set('x', e(1));
    assert.equal(off.size, 0);
  });
});
