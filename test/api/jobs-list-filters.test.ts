// GET jobs with the list extension (docs/compatibility.md): name=, queue=, vo=,
// submitted-since=, changed-since=, limit= and the cursor, and a monitor's view of a VO's
// jobs (monitor=). A request without them answers as the interface says, byte for byte;
// every bad value is a 400 naming the parameter.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { jobsFixture, HA, HB } from './jobs-fixture.js';

type F = Awaited<ReturnType<typeof jobsFixture>>;
type Listed = { id: string; state: string };

const ATLAS = { ...HA, 'x-test-fqans': '/atlas/Role=production' };
const CMS = { ...HA, 'x-test-fqans': '/cms' };
const BOB_ATLAS = { ...HB, 'x-test-fqans': '/atlas/higgs' };
const MONITOR = { 'x-test-dn': '/DC=org/DC=test/CN=Manager', accept: 'application/json', 'x-test-monitors': 'atlas' };

describe('GET jobs: filters and cursor paging', () => {
  let f: F;
  const ids: Record<string, string> = {};
  let beforeChange = 0;

  const list = async (query: string, headers: Record<string, string> = HA) => {
    const r = await f.app.inject({ method: 'GET', url: `/arex/rest/1.1/jobs${query}`, headers });
    return r;
  };
  const listed = async (query: string, headers: Record<string, string> = HA): Promise<Listed[]> => {
    const r = await list(query, headers);
    assert.equal(r.statusCode, 200, r.body);
    return (r.json<{ job?: Listed[] }>().job ?? []).map((j) => ({ id: j.id, state: j.state }));
  };
  const submit = async (name: string, headers: Record<string, string>, queue = 'main') => {
    const r = await f.submit(`&(executable="/bin/true")(jobname="${name}")(queue="${queue}")`, headers);
    const id = r.json<{ job: { id: string }[] }>().job[0]!.id;
    ids[name] = id;
  };

  before(async () => {
    f = await jobsFixture();
    await submit('a1', ATLAS);
    await submit('a2', ATLAS, 'long');
    await submit('c1', CMS);
    await submit('plain', HA);
    await submit('same', HA);
    await submit('same', HA);
    await submit('bob', BOB_ATLAS);
    beforeChange = Date.now();
    // One job changes later than everything else (the record's time is the change's).
    const j = f.store.get(ids.c1!)!;
    f.store.update(j, { state: 'PREPARING', restState: 'PREPARING' }, beforeChange + 60_000);
  });
  after(() => f.close());

  it('without the new parameters the answer is what it always was (id order, every job, no cursor)', async () => {
    const r = await list('');
    assert.equal(r.headers['ceres-next-cursor'], undefined);
    const all = r.json<{ job: Listed[] }>().job;
    assert.deepEqual(
      all.map((j) => j.id),
      f.jobs.list(f.store.get(ids.a1!)!.owner).map((j) => j.id),
    );
    assert.equal(all.length, 6);
    const xml = await list('', { ...HA, accept: 'application/xml' });
    assert.match(xml.body, /^<jobs><job><id>[a-z2-7]+<\/id><state>[A-Z]+<\/state><\/job>/);
  });

  it('limit= pages through the list in id order; the pages joined are the whole list', async () => {
    const whole = await listed('');
    const pages: Listed[][] = [];
    let query = '?limit=4';
    for (;;) {
      const r = await list(query);
      assert.equal(r.statusCode, 200);
      const page = r.json<{ job?: Listed[] }>().job ?? [];
      pages.push(page);
      const next = r.headers['ceres-next-cursor'];
      if (next === undefined) break;
      assert.equal(typeof next, 'string');
      query = `?limit=4&cursor=${String(next)}`;
    }
    assert.deepEqual(
      pages.map((p) => p.length),
      [4, 2],
    );
    assert.deepEqual(pages.flat(), whole);
  });

  it('a page that ends the list exactly carries a cursor to an empty page', async () => {
    const r = await list('?limit=6');
    const next = String(r.headers['ceres-next-cursor']);
    assert.deepEqual(await listed(`?limit=6&cursor=${next}`), []);
  });

  it('name= and queue= match exactly; the filters combine with state= and with each other', async () => {
    const same = await listed('?name=same');
    assert.ok(same.some((j) => j.id === ids.same));
    for (const j of same) assert.equal(f.store.get(j.id)?.name, 'same');
    assert.equal((await listed('?name=same')).length, 2);
    assert.equal((await listed('?name=sam')).length, 0, 'no substring match');
    assert.deepEqual(await listed('?queue=long'), [{ id: ids.a2!, state: 'ACCEPTING' }]);
    assert.deepEqual(await listed('?queue=long&name=a1'), []);
    assert.deepEqual(await listed('?state=PREPARING&name=c1'), [{ id: ids.c1!, state: 'PREPARING' }]);
    assert.deepEqual(await listed('?state=ACCEPTING&name=c1'), []);
  });

  it("vo= lists the caller's jobs of that VO (the first FQAN's), never another owner's", async () => {
    assert.deepEqual((await listed('?vo=atlas')).map((j) => j.id).sort(), [ids.a1!, ids.a2!].sort());
    assert.deepEqual(
      (await listed('?vo=cms')).map((j) => j.id),
      [ids.c1!],
    );
    assert.deepEqual(await listed('?vo=lhcb'), []);
    assert.deepEqual(
      (await listed('?vo=atlas', BOB_ATLAS)).map((j) => j.id),
      [ids.bob!],
    );
  });

  it('submitted-since= and changed-since= take ISO 8601 times, dates and epoch seconds', async () => {
    assert.equal((await listed('?submitted-since=2000-01-01')).length, 6);
    assert.equal((await listed('?submitted-since=2999-01-01T00:00:00Z')).length, 0);
    assert.equal((await listed(`?submitted-since=${Math.floor(beforeChange / 1000) + 3600}`)).length, 0);
    const later = new Date(beforeChange + 30_000).toISOString();
    assert.deepEqual(
      (await listed(`?changed-since=${later}`)).map((j) => j.id),
      [ids.c1!],
    );
    assert.equal((await listed('?changed-since=2000-01-01T00:00:00%2B02:00')).length, 6);
  });

  it('a filtered page goes on after its cursor with the same filter', async () => {
    const first = await list('?vo=atlas&limit=1');
    const next = String(first.headers['ceres-next-cursor']);
    const second = await listed(`?vo=atlas&limit=1&cursor=${next}`);
    const both = [...first.json<{ job: Listed[] }>().job, ...second].map((j) => j.id);
    assert.deepEqual(both, [ids.a1!, ids.a2!].sort());
  });

  for (const [query, word] of [
    ['?limit=0', 'limit'],
    ['?limit=-1', 'limit'],
    ['?limit=ten', 'limit'],
    ['?limit=1001', 'limit'],
    ['?limit=', 'limit'],
    ['?submitted-since=yesterday', 'submitted-since'],
    ['?submitted-since=2026-13-45', 'submitted-since'],
    ['?changed-since=2026-12-01T10:00:00', 'changed-since'],
    ['?vo=/atlas', 'vo'],
    ['?vo=', 'vo'],
    ['?name=', 'name'],
    [`?queue=${'q'.repeat(300)}`, 'queue'],
  ] as const)
    it(`${query.slice(0, 40)}: 400 naming ${word}`, async () => {
      const r = await list(query);
      assert.equal(r.statusCode, 400, r.body);
      assert.match(r.body, /CE_ERR_JOB_BAD_LIST_FILTER/);
      assert.match(r.body, new RegExp(word));
    });

  for (const cursor of ['', 'nonsense!', 'AAAA', Buffer.from('j1:../x').toString('base64url'), 'x'.repeat(200)])
    it(`cursor='${cursor.slice(0, 20)}': 400, never a page from somewhere`, async () => {
      const r = await list(`?limit=2&cursor=${cursor}`);
      assert.equal(r.statusCode, 400, r.body);
      assert.match(r.body, /CE_ERR_JOB_BAD_CURSOR/);
    });

  it('an unknown state in state= is still the 400 it was, with the new parameters too', async () => {
    const r = await list('?state=RUNNIN&limit=5');
    assert.equal(r.statusCode, 400);
    assert.match(r.body, /CE_ERR_JOB_BAD_STATE_FILTER/);
  });
});

describe('GET jobs?monitor=<vo>: the monitoring role', () => {
  let f: F;
  const ids: Record<string, string> = {};
  const list = (query: string, headers: Record<string, string>) =>
    f.app.inject({ method: 'GET', url: `/arex/rest/1.1/jobs${query}`, headers });

  before(async () => {
    f = await jobsFixture();
    for (const [name, h] of [
      ['alice-atlas', ATLAS],
      ['alice-cms', CMS],
      ['bob-atlas', BOB_ATLAS],
    ] as const) {
      const r = await f.submit(`&(executable="/bin/true")(jobname="${name}")`, h);
      ids[name] = r.json<{ job: { id: string }[] }>().job[0]!.id;
    }
  });
  after(() => f.close());

  it("lists every owner's jobs of the VO, paged and filtered like a user's own list", async () => {
    const r = await list('?monitor=atlas', MONITOR);
    assert.equal(r.statusCode, 200, r.body);
    assert.deepEqual(
      r.json<{ job: Listed[] }>().job.map((j) => j.id),
      [ids['alice-atlas']!, ids['bob-atlas']!].sort(),
    );
    const p1 = await list('?monitor=atlas&limit=1', MONITOR);
    const p2 = await list(`?monitor=atlas&limit=1&cursor=${String(p1.headers['ceres-next-cursor'])}`, MONITOR);
    assert.equal(p2.json<{ job: Listed[] }>().job.length, 1);
    assert.notEqual(p1.json<{ job: Listed[] }>().job[0]!.id, p2.json<{ job: Listed[] }>().job[0]!.id);
    const named = await list('?monitor=atlas&name=bob-atlas', MONITOR);
    assert.deepEqual(
      named.json<{ job: Listed[] }>().job.map((j) => j.id),
      [ids['bob-atlas']!],
    );
    assert.deepEqual((await list('?monitor=atlas&vo=cms', MONITOR)).json<{ job?: Listed[] }>().job ?? [], []);
  });

  it("a monitor's plain list is its own jobs only (1.x answers do not change with the role)", async () => {
    const r = await list('', MONITOR);
    assert.equal(r.statusCode, 200);
    assert.deepEqual(r.json<{ job?: Listed[] }>().job ?? [], []);
  });

  it('monitor= of a VO the caller does not monitor is a 403, also for a member of that VO', async () => {
    for (const [q, h] of [
      ['?monitor=cms', MONITOR],
      ['?monitor=atlas', ATLAS],
      ['?monitor=atlas', HB],
    ] as const) {
      const r = await list(q, h);
      assert.equal(r.statusCode, 403, `${q} ${h['x-test-dn']}`);
      assert.match(r.body, /CE_ERR_JOB_NOT_MONITOR/);
    }
  });
});
