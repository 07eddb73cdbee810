/**
 * The site's load series (src/store/site-series.ts) on a real SQLite store: what a tick
 * counts from the job event sequence and the active jobs, the bucket a change lands in,
 * rollover into the next bucket and the hourly sum, a restart counting nothing twice and
 * nothing lost, the bound on rows and names, and the clock stepping back and forward.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/store/database.js';
import { SiteSeries, MAX_CLOCK_STEP_BACK_MS } from '../../src/store/site-series.js';
import { ENDED_REST_STATES, type InternalState } from '../../src/vocabulary/job-states.js';
import { MAX_KEYS, OTHER, RESOLUTIONS, binOf, parseBucket, trimmed } from '../../src/store/site-buckets.js';

const MIN = 60_000;
/** The engine's state of a job of a REST state, as far as the series reads it: ended or not. */
const FINISHED: InternalState = 'FINISHED';
const ACCEPTED: InternalState = 'ACCEPTED';
const ENDED: readonly string[] = ENDED_REST_STATES;
const T0 = Date.UTC(2026, 0, 5, 10, 0, 0); // a whole hour

interface Fixture {
  db: Db;
  clock: { now: number };
  series: SiteSeries;
  reopen(): void;
}

function withDb(t: { after: (fn: () => void) => void }): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-series-'));
  const file = join(dir, 'db');
  const clock = { now: T0 };
  const f = { db: openDatabase(file), clock } as Fixture;
  f.series = new SiteSeries(f.db, () => clock.now);
  f.reopen = () => {
    f.db.close();
    f.db = openDatabase(file);
    f.series = new SiteSeries(f.db, () => clock.now);
  };
  t.after(() => {
    f.db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return f;
}

/** A job stored at `at` (its events come from the store's triggers, as in the service). */
function job(f: Fixture, id: string, at: number, o: { queue?: string; route?: string; fqans?: string[] } = {}): void {
  f.db
    .prepare(
      `INSERT INTO jobs (id, owner, owner_dn, name, state, rest_state, queue, route, fqans, format, description, raw, created_at, updated_at)
       VALUES (?, 'u', 'u', '', ?, 'ACCEPTING', ?, ?, ?, 'xrsl', '{}', '', ?, ?)`,
    )
    .run(
      id,
      ACCEPTED,
      o.queue ?? 'main',
      o.route === undefined ? null : JSON.stringify({ name: o.route }),
      o.fqans ? JSON.stringify(o.fqans) : null,
      at,
      at,
    );
}
function move(f: Fixture, id: string, rest: string, at: number, extra: { startedAt?: number; endedAt?: number } = {}) {
  f.db
    .prepare(
      'UPDATE jobs SET rest_state = ?, state = ?, updated_at = ?, started_at = coalesce(?, started_at), ended_at = coalesce(?, ended_at) WHERE id = ?',
    )
    .run(rest, ENDED.includes(rest) ? FINISHED : ACCEPTED, at, extra.startedAt ?? null, extra.endedAt ?? null, id);
}
const rows = (f: Fixture, res: number) =>
  (
    f.db.prepare('SELECT start, data FROM site_series WHERE resolution = ? ORDER BY start').all(res) as {
      start: number;
      data: string;
    }[]
  ).map((r) => ({ start: r.start, data: parseBucket(r.data) }));

test('a tick counts ends, staging, wait and run times in the bucket of each change, and the active jobs', (t) => {
  const f = withDb(t);
  job(f, 'a', T0 + MIN, { queue: 'short', fqans: ['/atlas/Role=production'], route: 'r1' });
  move(f, 'a', 'PREPARING', T0 + MIN);
  move(f, 'a', 'SUBMITTING', T0 + 2 * MIN);
  move(f, 'a', 'RUNNING', T0 + 7 * MIN, { startedAt: T0 + 7 * MIN }); // waited 6 min: bin 900
  job(f, 'b', T0 + 2 * MIN, { queue: 'long' });
  move(f, 'b', 'RUNNING', T0 + 3 * MIN, { startedAt: T0 + 3 * MIN });
  move(f, 'b', 'FINISHING', T0 + 4 * MIN, { endedAt: T0 + 4 * MIN });
  move(f, 'b', 'FAILED', T0 + 4 * MIN);
  f.clock.now = T0 + 8 * MIN;
  f.series.tick();
  const five = rows(f, 300);
  assert.deepEqual(
    five.map((r) => r.start),
    [T0, T0 + 5 * MIN],
  );
  const [first, second] = five.map((r) => r.data);
  assert.equal(first!.stageIn, 1);
  assert.equal(first!.stageOut, 1);
  assert.deepEqual(first!.ended, { FAILED: 1 });
  assert.equal(first!.run[binOf(60)], 1);
  assert.equal(second!.wait[binOf(360)], 1);
  assert.equal(first!.samples, 0, 'the snapshot is the current bucket’s');
  assert.equal(second!.samples, 1);
  assert.deepEqual(second!.states, { RUNNING: 1 });
  assert.deepEqual(second!.by, { queue: { short: 1 }, vo: { atlas: 1 }, route: { r1: 1 } });
  const hour = rows(f, 3600);
  assert.equal(hour.length, 1);
  assert.equal(hour[0]!.start, T0);
  assert.deepEqual(hour[0]!.data.ended, { FAILED: 1 });
  assert.equal(hour[0]!.data.stageIn, 1);
  assert.equal(hour[0]!.data.wait[binOf(360)], 1);
});

test('buckets roll over; the hourly bucket sums its ticks; the means come from the samples', (t) => {
  const f = withDb(t);
  job(f, 'a', T0);
  move(f, 'a', 'RUNNING', T0, { startedAt: T0 });
  for (let i = 0; i < 12; i++) {
    f.clock.now = T0 + i * 5 * MIN + MIN;
    f.series.tick();
  }
  move(f, 'a', 'FINISHED', T0 + 61 * MIN, { endedAt: T0 + 61 * MIN });
  f.clock.now = T0 + 62 * MIN;
  f.series.tick();
  assert.equal(rows(f, 300).length, 13);
  const hours = rows(f, 3600);
  assert.deepEqual(
    hours.map((h) => [h.start, h.data.samples, h.data.states.RUNNING ?? 0, h.data.ended.FINISHED ?? 0]),
    [
      [T0, 12, 12, 0],
      [T0 + 60 * MIN, 1, 0, 1],
    ],
  );
});

test('a restart resumes the counting: nothing counted twice, nothing lost (also after a crash)', (t) => {
  const f = withDb(t);
  job(f, 'a', T0);
  move(f, 'a', 'FINISHED', T0 + MIN);
  f.clock.now = T0 + 2 * MIN;
  f.series.tick();
  // A change after the last tick, then the process dies (no tick at stop).
  job(f, 'b', T0 + 3 * MIN);
  move(f, 'b', 'KILLED', T0 + 3 * MIN);
  f.reopen();
  f.clock.now = T0 + 4 * MIN;
  f.series.tick();
  f.reopen();
  f.clock.now = T0 + 4 * MIN + 1000;
  f.series.tick();
  const [b] = rows(f, 300);
  assert.deepEqual(b!.data.ended, { FINISHED: 1, KILLED: 1 });
  assert.equal(b!.data.samples, 3);
});

test('a first start counts from then on, not the history before it', (t) => {
  const f = withDb(t);
  f.series.stop(); // no timer started: writes the (empty) current bucket
  job(f, 'old', T0 - 86_400_000);
  move(f, 'old', 'FINISHED', T0 - 86_400_000);
  f.db.exec('DELETE FROM site_series');
  f.reopen();
  f.series.tick();
  assert.deepEqual(rows(f, 300)[0]!.data.ended, {});
});

test('the table keeps the newest buckets of each length only; names beyond the bound are summed', (t) => {
  const f = withDb(t);
  for (let q = 0; q < MAX_KEYS * 3; q++) {
    job(f, `q${q}`, T0, { queue: `queue-${String(q).padStart(2, '0')}` });
    move(f, `q${q}`, 'RUNNING', T0);
  }
  // Far more 5-minute buckets than are kept: 5 days of ticks, 10 minutes apart.
  for (let i = 0; i < 720; i++) {
    f.clock.now = T0 + i * 10 * MIN;
    f.series.tick();
  }
  const five = rows(f, 300);
  const hours = rows(f, 3600);
  assert.equal(five.length, RESOLUTIONS[0]!.keep);
  assert.equal(five[five.length - 1]!.start, T0 + 719 * 10 * MIN);
  assert.equal(hours.length, 120);
  for (const r of [...five, ...hours]) {
    const names = Object.keys(r.data.by.queue);
    assert.ok(names.length <= MAX_KEYS, `${names.length} names`);
    assert.ok(names.includes(OTHER));
    assert.equal(
      Object.values(r.data.by.queue).reduce((a, b) => a + b, 0),
      MAX_KEYS * 3 * r.data.samples,
      'no job lost to the bound',
    );
  }
  const size = f.db.prepare('SELECT max(length(data)) FROM site_series').pluck().get() as number;
  assert.ok(size < 4096, `a record of ${size} bytes`);
});

test('a long name is cut and kept on one line; OTHER is never ranked away', () => {
  const out = trimmed({ [OTHER]: 1000, a: 1, b: 2, c: 3 }, 3);
  assert.deepEqual(out, { c: 3, b: 2, [OTHER]: 1001 });
});

test('the clock: a small step back merges into the newest bucket; a large one drops the future; forward leaves a gap', (t) => {
  const f = withDb(t);
  job(f, 'a', T0);
  f.clock.now = T0 + 12 * MIN;
  f.series.tick();
  // Back by 10 minutes: a change stamped then lands in the newest bucket, none before it is written.
  f.clock.now = T0 + 2 * MIN;
  move(f, 'a', 'FINISHED', T0 + 2 * MIN);
  f.series.tick();
  assert.deepEqual(
    rows(f, 300).map((r) => [r.start, r.data.samples, r.data.ended.FINISHED ?? 0]),
    [
      [T0, 0, 0], // the submission's change, before the first tick
      [T0 + 10 * MIN, 2, 1],
    ],
  );
  // Forward by a day: a gap, then the new bucket.
  f.clock.now = T0 + 86_400_000;
  f.series.tick();
  assert.deepEqual(
    rows(f, 300).map((r) => r.start),
    [T0, T0 + 10 * MIN, T0 + 86_400_000],
  );
  // Back by more than the bound: the buckets after the new time go, counting goes on.
  f.clock.now = T0 + 86_400_000 - MAX_CLOCK_STEP_BACK_MS - 10 * MIN;
  f.series.tick();
  const after = rows(f, 300).map((r) => r.start);
  assert.deepEqual(after, [T0, T0 + 10 * MIN, T0 + 86_400_000 - MAX_CLOCK_STEP_BACK_MS - 10 * MIN]);
  assert.ok(rows(f, 3600).every((r) => r.start <= f.clock.now));
});

test('a route that is not JSON is refused by the store (its route index reads it), and a tick goes on', (t) => {
  const f = withDb(t);
  job(f, 'a', T0);
  // Migration 18's index on the route's name: a malformed route can never be stored.
  assert.throws(() => f.db.prepare("UPDATE jobs SET route = 'not json' WHERE id = 'a'").run(), /malformed JSON/);
  f.clock.now = T0 + MIN;
  f.series.tick();
  assert.deepEqual(rows(f, 300)[0]!.data.by.route, {});
});

test('a stored record that does not read as one counts as empty', (t) => {
  const f = withDb(t);
  f.db
    .prepare('INSERT INTO site_series (resolution, start, seq, data) VALUES (300, ?, 0, ?)')
    .run(T0, '{"samples":"x"');
  f.db.prepare('INSERT INTO site_series (resolution, start, seq, data) VALUES (300, ?, 0, ?)').run(T0 + 5 * MIN, '[1]');
  f.clock.now = T0 + 6 * MIN;
  f.series.tick();
  const r = f.series.points(300, T0, T0 + 10 * MIN);
  assert.equal(r.length, 2);
  assert.equal(r[0]!.data.samples, 0);
  assert.equal(r[1]!.data.samples, 1);
});
