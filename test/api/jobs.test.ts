// The jobs collection: submission, listing and bulk actions, as the real clients
// send them, including every bad-input and cross-user case.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_NOT_MADE, identityOf } from '../../src/sessions/session-dirs.js';
import { jobsFixture, ECHO, HA, HB, ALICE } from './jobs-fixture.js';

type F = Awaited<ReturnType<typeof jobsFixture>>;
const ids = (r: { body: string }) => (JSON.parse(r.body).job as { id: string }[]).map((j) => j.id);

describe('POST jobs?action=new', () => {
  let f: F;
  before(async () => (f = await jobsFixture()));
  after(() => f.close());

  it('one xRSL: 201, one item 201/Created/id/ACCEPTING, engine poked; the session directory is made on first use', async () => {
    const r = await f.submit(ECHO);
    assert.equal(r.statusCode, 201);
    const [item] = JSON.parse(r.body).job;
    assert.equal(item['status-code'], '201');
    assert.equal(item.reason, 'Created');
    assert.equal(item.state, 'ACCEPTING');
    assert.match(item.id, /^[a-z2-7]{26}$/);
    assert.ok(f.submitted.includes(item.id));
    assert.ok(!existsSync(join(f.sessionRoot, item.id)), 'no directory at submission');
    assert.equal(f.store.sessionIdentOf(item.id), SESSION_NOT_MADE);
    await f.sessions.check(item.id, SESSION_NOT_MADE);
    const s = lstatSync(join(f.sessionRoot, item.id), { bigint: true });
    assert.ok(s.isDirectory());
    assert.equal(f.store.sessionIdentOf(item.id), identityOf(s), 'its identity is stored');
  });

  it('a content type is ignored: xRSL sent as application/json or applicaton/rsl is still xRSL', async () => {
    for (const ct of ['application/json', 'applicaton/rsl', 'text/plain']) {
      const r = await f.submit(ECHO, { ...HA, 'content-type': ct });
      assert.equal(JSON.parse(r.body).job[0]['status-code'], '201', ct);
    }
  });

  it('a leading UTF-8 BOM and a leading comment are accepted (A-REX rejects both)', async () => {
    assert.equal(JSON.parse((await f.submit(`\ufeff${ECHO}`)).body).job[0]['status-code'], '201');
    assert.equal(JSON.parse((await f.submit(`(* a comment *)\n${ECHO}`)).body).job[0]['status-code'], '201');
  });

  it('bulk ADL: one result per description, in order; a bad item never affects the others', async () => {
    const good =
      '<ActivityDescription xmlns="http://www.eu-emi.eu/es/2010/12/adl"><Application><Executable><Path>/bin/true</Path></Executable></Application></ActivityDescription>';
    const badQueue =
      '<ActivityDescription xmlns="http://www.eu-emi.eu/es/2010/12/adl"><Application><Executable><Path>/bin/true</Path></Executable></Application><Resources><QueueName>nope</QueueName></Resources></ActivityDescription>';
    const r = await f.submit(`<ActivityDescriptions>${good}${badQueue}${good}</ActivityDescriptions>`);
    assert.equal(r.statusCode, 201);
    const items = JSON.parse(r.body).job;
    assert.deepEqual(
      items.map((i: { 'status-code': string }) => i['status-code'][0]),
      ['2', '4', '2'],
    );
    assert.equal(items[1].id, undefined);
    assert.equal(items[1].state, undefined);
    assert.ok(items[1].reason.length > 0);
  });

  it('multi-xRSL with +: one job per sub-request', async () => {
    const r = await f.submit(`+(${ECHO})(${ECHO})(${ECHO})`);
    assert.equal(JSON.parse(r.body).job.length, 3);
  });

  it('XML answer for the ARC client (Accept: text/xml), compact, status-code first', async () => {
    const r = await f.submit(ECHO, { 'x-test-dn': ALICE, accept: 'text/xml' });
    assert.match(
      r.body,
      /^<jobs><job><status-code>201<\/status-code><reason>Created<\/reason><id>[a-z2-7]+<\/id><state>ACCEPTING<\/state><\/job><\/jobs>$/,
    );
  });

  it('1.1 queue parameter is a default; the description wins; 1.0 ignores it', async () => {
    const [a] = ids(await f.submit(ECHO, HA, '1.1', '&queue=long'));
    assert.equal(f.store.get(a as string)?.queue, 'long');
    const [b] = ids(await f.submit('&(executable="/bin/true")(queue="main")', HA, '1.1', '&queue=long'));
    assert.equal(f.store.get(b as string)?.queue, 'main');
    const [c] = ids(await f.submit(ECHO, HA, '1.0', '&queue=long'));
    assert.equal(f.store.get(c as string)?.queue, 'main');
  });

  it("1.1 delegation_id: own delegation accepted; another user's or an unknown one is a per-item 404", async () => {
    const ok = JSON.parse((await f.submit(ECHO, HA, '1.1', '&delegation_id=dalice')).body).job[0];
    assert.equal(ok['status-code'], '201');
    assert.deepEqual(f.store.delegationsOf(ok.id), ['dalice']);
    for (const d of ['dbob', 'nosuch']) {
      const r = JSON.parse((await f.submit(ECHO, HA, '1.1', `&delegation_id=${d}`)).body).job[0];
      assert.equal(r['status-code'], '404');
      assert.equal(r.id, undefined);
    }
  });

  it('1.1 instances: N copies; bad counts and instances with bulk bodies are refused', async () => {
    const r = await f.submit(ECHO, HA, '1.1', '&instances=3');
    assert.equal(JSON.parse(r.body).job.length, 3);
    assert.equal((await f.submit(ECHO, HA, '1.1', '&instances=0')).statusCode, 400);
    assert.equal((await f.submit(ECHO, HA, '1.1', '&instances=2&instances_min=3')).statusCode, 400);
    assert.equal((await f.submit(`+(${ECHO})(${ECHO})`, HA, '1.1', '&instances=2')).statusCode, 400);
    assert.equal((await f.submit(ECHO, HA, '1.1', '&instances=20&instances_min=11')).statusCode, 403);
    const capped = await f.submit(ECHO, HA, '1.1', '&instances=20');
    assert.equal(JSON.parse(capped.body).job.length, 10);
    assert.equal(JSON.parse((await f.submit(ECHO, HA, '1.0', '&instances=3')).body).job.length, 1);
  });

  it('whole-request errors are clear 4xx: empty body, blank body, unrecognised payload, invalid UTF-8', async () => {
    for (const body of ['', '   \n ', 'hello', '{"x":1}']) {
      const r = await f.submit(body);
      assert.ok(r.statusCode >= 400 && r.statusCode < 500, `${JSON.stringify(body)} -> ${r.statusCode}`);
      assert.ok(JSON.parse(r.body).reason.length > 0);
    }
    const r = await f.app.inject({
      method: 'POST',
      url: '/arex/rest/1.1/jobs?action=new',
      headers: HA,
      payload: Buffer.from([0x26, 0x28, 0xff, 0xfe, 0x29]),
    });
    assert.equal(r.statusCode, 400);
  });

  it('a body over the submission limit is a 413', async () => {
    const r = await f.submit(`&(executable="/bin/true")(* ${'x'.repeat(5 * 1024 * 1024)} *)`);
    assert.equal(r.statusCode, 413);
  });

  it('no identity: 401', async () => {
    const r = await f.submit(ECHO, { accept: 'application/json' });
    assert.equal(r.statusCode, 401);
  });

  it('missing or unknown action: 400', async () => {
    assert.equal(
      (await f.app.inject({ method: 'POST', url: '/arex/rest/1.1/jobs', headers: HA, payload: ECHO })).statusCode,
      400,
    );
    assert.equal(
      (await f.app.inject({ method: 'POST', url: '/arex/rest/1.1/jobs?action=fly', headers: HA, payload: ECHO }))
        .statusCode,
      400,
    );
  });

  it('PUT and DELETE on jobs: 405 with Allow: GET, POST, HEAD', async () => {
    for (const method of ['PUT', 'DELETE'] as const) {
      const r = await f.app.inject({ method, url: '/arex/rest/1.1/jobs', headers: HA });
      assert.equal(r.statusCode, 405);
      assert.equal(r.headers.allow, 'GET, POST, HEAD');
    }
  });
});

describe('GET jobs and bulk actions', () => {
  let f: F;
  let mine: string[];
  let theirs: string;
  before(async () => {
    f = await jobsFixture({ maxIds: 50 });
    mine = ids(await f.submit(`+(${ECHO})(${ECHO})`));
    [theirs] = ids(await f.submit(ECHO, HB)) as [string];
  });
  after(() => f.close());

  it("lists only the caller's jobs, with state; JSON job is always an array", async () => {
    const r = await f.app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs', headers: HA });
    const listed = JSON.parse(r.body)
      .job.map((j: { id: string }) => j.id)
      .sort();
    assert.deepEqual(listed, [...mine].sort());
    const rb = await f.app.inject({ method: 'GET', url: '/arex/rest/1.0/jobs', headers: HB });
    assert.deepEqual(JSON.parse(rb.body), { job: [{ id: theirs, state: 'ACCEPTING' }] });
    const none = await f.app.inject({
      method: 'GET',
      url: '/arex/rest/1.1/jobs',
      headers: { 'x-test-dn': '/CN=nobody', accept: 'application/json' },
    });
    assert.deepEqual(JSON.parse(none.body), { job: [] });
  });

  it('state filter: comma list; unknown names are a 400', async () => {
    const r = await f.app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs?state=ACCEPTING,FINISHED', headers: HA });
    assert.equal(JSON.parse(r.body).job.length, 2);
    const none = await f.app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs?state=FINISHED', headers: HA });
    assert.deepEqual(JSON.parse(none.body), { job: [] });
    const bad = await f.app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs?state=ACCEPTING,BOGUS', headers: HA });
    assert.equal(bad.statusCode, 400);
    assert.match(JSON.parse(bad.body).reason, /BOGUS/);
  });

  it('status with an XML id list and no Content-Type (ARC client), 201 overall, 200 per item', async () => {
    const body = `<jobs>${mine.map((id) => `<job><id>${id}</id></job>`).join('')}</jobs>`;
    const r = await f.act('status', body, { 'x-test-dn': ALICE, accept: 'text/xml' });
    assert.equal(r.statusCode, 201);
    assert.equal((r.body.match(/<status-code>200<\/status-code>/g) ?? []).length, 2);
  });

  it('JSON id list: {"job":{"id":..}} single object, charset parameter, output of GET jobs posted back', async () => {
    const one = await f.act('status', JSON.stringify({ job: { id: mine[0] } }), {
      ...HA,
      'content-type': 'application/json; charset=utf-8',
    });
    assert.deepEqual(
      JSON.parse(one.body).job.map((j: { state: string }) => j.state),
      ['ACCEPTING'],
    );
    const listed = (await f.app.inject({ method: 'GET', url: '/arex/rest/1.1/jobs', headers: HA })).body;
    const back = await f.act('status', listed);
    assert.equal(JSON.parse(back.body).job.length, 2);
    const listedXml = (
      await f.app.inject({
        method: 'GET',
        url: '/arex/rest/1.1/jobs',
        headers: { 'x-test-dn': ALICE, accept: 'application/xml' },
      })
    ).body;
    const backXml = await f.act('status', listedXml, { ...HA, 'content-type': 'application/xml' });
    assert.equal(JSON.parse(backXml.body).job.length, 2);
  });

  it("another user's job is indistinguishable from a missing one (404 Job not found)", async () => {
    const r = await f.act('status', JSON.stringify({ job: [{ id: theirs }, { id: 'nosuchjob' }] }));
    const items = JSON.parse(r.body).job;
    assert.deepEqual(
      items.map((i: { 'status-code': string; reason: string }) => [i['status-code'], i.reason]),
      [
        ['404', 'Job not found'],
        ['404', 'Job not found'],
      ],
    );
    for (const action of ['info', 'kill', 'clean', 'restart', 'delegations']) {
      const a = JSON.parse((await f.act(action, JSON.stringify({ job: [{ id: theirs }] }))).body).job[0];
      assert.equal(a['status-code'], '404', action);
    }
    assert.equal(f.store.get(theirs)?.killRequested, false);
    assert.equal(f.store.get(theirs)?.cleanRequested, false);
  });

  it('items come back in request order, duplicates answered twice', async () => {
    const req = [mine[1], 'x', mine[0], mine[1]];
    const r = await f.act('status', JSON.stringify({ job: req.map((id) => ({ id })) }));
    assert.deepEqual(
      JSON.parse(r.body).job.map((j: { id: string }) => j.id),
      req,
    );
  });

  it('entries that are not ids each get their own 400 item in their place, for every action, JSON and XML', async () => {
    const [own] = ids(await f.submit(ECHO)) as [string];
    const json = JSON.stringify({
      job: [{ id: null }, { id: own }, { id: 123 }, { id: {} }, { id: [true, own] }, { id: '' }, { nid: 'x' }],
    });
    const xml = `<jobs><job><id/></job><job><id>${own}</id></job><job><id><x/></id></job><job/></jobs>`;
    type Expected = ReadonlyArray<readonly [string | undefined, string | undefined, string | undefined]>;
    const expectJson: Expected = [
      ['400', 'Job id must be a string, not null', undefined],
      [undefined, undefined, own],
      ['400', 'Job id must be a string, not number', undefined],
      ['400', 'Job id must be a string, not object', undefined],
      ['400', 'Job id must be a string, not boolean', undefined],
      [undefined, undefined, own],
      ['400', 'Job id is empty', undefined],
      ['400', 'Job entry has no id', undefined],
    ];
    const expectXml: Expected = [
      ['400', 'Job id is empty', undefined],
      [undefined, undefined, own],
      ['400', 'Job id must be text, not elements', undefined],
      ['400', 'Job entry has no id', undefined],
    ];
    type Item = { 'status-code': string; reason: string; id?: string; info_document?: unknown };
    for (const action of ['status', 'info', 'kill', 'clean', 'restart', 'delegations']) {
      for (const [payload, ct, expected] of [
        [json, 'application/json', expectJson],
        [xml, 'application/xml', expectXml],
      ] as Array<[string, string, Expected]>) {
        const r = await f.act(action, payload, { ...HA, 'content-type': ct });
        assert.equal(r.statusCode, 201, `${action} ${ct}`);
        const items = JSON.parse(r.body).job as Item[];
        assert.equal(items.length, expected.length, `${action} ${ct}: one answer per entry`);
        items.forEach((it, i) => {
          const [code, reason, id] = expected[i] ?? [];
          if (id !== undefined) {
            assert.equal(it.id, id, `${action} ${ct} #${i}`);
            assert.notEqual(it['status-code'], '400', `${action} ${ct} #${i}`);
          } else {
            assert.deepEqual([it['status-code'], it.reason, it.id], [code, reason, undefined], `${action} ${ct} #${i}`);
            if (action === 'info') assert.equal(it.info_document, '', 'an info item always has info_document');
          }
        });
      }
    }
    const x = await f.act('status', xml, { 'x-test-dn': ALICE, accept: 'text/xml' });
    assert.match(
      x.body,
      /^<jobs><job><status-code>400<\/status-code><reason>Job id is empty<\/reason><\/job><job><status-code>200<\/status-code>/,
    );
  });

  it('an empty body is an empty list: 201 with no items', async () => {
    for (const [payload, ct] of [
      ['', undefined],
      ['{"job":[]}', 'application/json'],
      ['<jobs/>', 'application/xml'],
    ] as const) {
      const r = await f.act('status', payload, ct ? { ...HA, 'content-type': ct } : HA);
      assert.equal(r.statusCode, 201);
      assert.deepEqual(JSON.parse(r.body), { job: [] });
    }
  });

  it('malformed id lists are a 400, unknown media types a 415 (A-REX answers 201 with nothing)', async () => {
    assert.equal((await f.act('status', '{"job":[{"id":')).statusCode, 400);
    assert.equal(
      (await f.act('status', '<jobs><job><id>x</job>', { ...HA, 'content-type': 'application/xml' })).statusCode,
      400,
    );
    assert.equal(
      (await f.act('status', '<!DOCTYPE x [<!ENTITY a "b">]><jobs/>', { ...HA, 'content-type': 'application/xml' }))
        .statusCode,
      400,
    );
    assert.equal((await f.act('status', 'id1', { ...HA, 'content-type': 'text/plain' })).statusCode, 415);
  });

  it('more ids than the cap: 413', async () => {
    const many = JSON.stringify({ job: Array.from({ length: 51 }, (_, i) => ({ id: `j${i}` })) });
    assert.equal((await f.act('status', many)).statusCode, 413);
  });

  it('action=info has a cap of its own (jobs.maxInfoIdsPerRequest) below the bulk cap: 413 over it, other actions keep theirs', async () => {
    // docs/operations.md, "Limits": info answers are large, so they are capped apart.
    const g = await jobsFixture({ maxIds: 50, maxInfoIds: 3 });
    try {
      const list = (n: number): string =>
        JSON.stringify({ job: Array.from({ length: n }, (_, i) => ({ id: `j${i}` })) });
      const over = await g.act('info', list(4));
      assert.equal(over.statusCode, 413);
      assert.match(JSON.parse(over.body).reason, /at most 3 job ids/);
      assert.equal((await g.act('info', list(3))).statusCode, 201);
      assert.equal((await g.act('status', list(4))).statusCode, 201);
    } finally {
      await g.close();
    }
  });

  it('info gives a ComputingActivity with the arcrest: state', async () => {
    const r = await f.act('info', JSON.stringify({ job: [{ id: mine[0] }] }));
    const act = JSON.parse(r.body).job[0].info_document.ComputingActivity;
    assert.ok((act.State as string[]).includes('arcrest:ACCEPTING'));
    assert.equal(act.Owner, ALICE);
  });

  it('kill 202 and the engine is poked; restart of an unfailed job 409', async () => {
    const k = JSON.parse((await f.act('kill', JSON.stringify({ job: [{ id: mine[0] }] }))).body).job[0];
    assert.equal(k['status-code'], '202');
    assert.equal(f.store.get(mine[0] as string)?.killRequested, true);
    assert.ok(f.poked.includes(mine[0] as string));
    const r = JSON.parse((await f.act('restart', JSON.stringify({ job: [{ id: mine[1] }] }))).body).job[0];
    assert.equal(r['status-code'], '409');
  });

  it("delegations action answers on 1.0 too (the ARC 6 client's arcsync uses it there)", async () => {
    const r = await f.act(
      'delegations',
      JSON.stringify({ job: [{ id: mine[1] }] }),
      { ...HA, 'content-type': 'application/json' },
      '1.0',
    );
    const item = JSON.parse(r.body).job[0];
    assert.equal(item['status-code'], '200');
  });
});
