// Lifetime of delegations: expiry, the grace period, lapsed requests, the sweep,
// deletion while jobs use a delegation. The service clock is moved instead of waiting.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JobStore } from '../../src/store/job-store.js';
import { base, fakeJwt, makeFixture, signAs, type Fixture, type User } from './fixture.js';
import { newJobRow } from '../helpers/new-job.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

async function newX509(f: Fixture, u: User): Promise<{ id: string; csr: string }> {
  const r = await f.app.inject({ method: 'POST', url: `${base()}?action=new`, headers: u.h });
  assert.equal(r.statusCode, 201, r.body);
  return { id: String(r.headers.location).split('/').pop() as string, csr: r.body };
}
const J = { accept: 'application/json' };
const put = (f: Fixture, u: User, id: string, body: string) =>
  f.app.inject({ method: 'PUT', url: `${base()}/${id}`, headers: { ...u.h, ...J }, payload: body });
const act = (f: Fixture, u: User, id: string, action: string) =>
  f.app.inject({ method: 'POST', url: `${base()}/${id}?action=${action}`, headers: { ...u.h, ...J } });
const listed = async (f: Fixture, u: User): Promise<string[]> => {
  const r = await f.app.inject({ method: 'GET', url: base(), headers: { ...u.h, ...J } });
  return (JSON.parse(r.body) as { delegation: { id: string }[] }).delegation.map((d) => d.id);
};
const filesOf = async (f: Fixture, id: string): Promise<string[]> =>
  (await readdir(f.keyDir)).filter((n) => n.startsWith(id)).sort();

describe('delegation lifetime', () => {
  let f: Fixture;
  before(async () => {
    // Defaults: requests lapse after 1 h, expired delegations are kept 7 days.
    f = await makeFixture();
  });
  after(() => f.close());

  it('an expired proxy is no longer offered, but its owner can renew it within the grace period', async () => {
    f.clock.offset = 0;
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, csr, { lifetimeSeconds: 600 }))).statusCode, 200);
    assert.ok((await listed(f, f.alice)).includes(id));

    f.clock.offset = 20 * MIN; // past the 10-minute proxy
    assert.ok(!(await listed(f, f.alice)).includes(id), 'not listed');
    assert.equal(f.wiring.port.ownedBy(id, f.alice.owner), false, 'new jobs may not name it');
    assert.equal(await f.wiring.credentialFor(id, f.alice.owner), undefined, 'staging gets nothing');
    assert.ok(f.wiring.expiry(id) !== undefined, 'jobs still show when it expired');
    assert.equal((await act(f, f.alice, id, 'get')).statusCode, 200, 'the owner can still look at it');

    const r = await act(f, f.alice, id, 'renew');
    assert.equal(r.statusCode, 201);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, r.body))).statusCode, 200);
    assert.ok((await listed(f, f.alice)).includes(id), 'offered again after the renewal');
    assert.equal((await f.wiring.credentialFor(id, f.alice.owner))?.kind, 'x509');
    f.clock.offset = 0;
  });

  it('after the grace period the sweep removes it with its files; every action is then a 404', async () => {
    f.clock.offset = 0;
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, csr, { lifetimeSeconds: 600 }))).statusCode, 200);
    f.clock.offset = 7 * DAY + HOUR;
    assert.equal((await act(f, f.alice, id, 'get')).statusCode, 404, 'gone even before the sweep runs');
    const s = await f.wiring.service.sweep();
    assert.ok(s.expired >= 1);
    assert.deepEqual(await filesOf(f, id), []);
    for (const a of ['get', 'renew', 'delete']) assert.equal((await act(f, f.alice, id, a)).statusCode, 404, a);
    f.clock.offset = 0;
  });

  it('a request that is never answered lapses: the delegation is removed', async () => {
    f.clock.offset = 0;
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await filesOf(f, id)).length, 1);
    f.clock.offset = HOUR + MIN;
    const late = await put(f, f.alice, id, await signAs(f.alice, csr));
    assert.equal(late.statusCode, 404, late.body);
    await f.wiring.service.sweep();
    assert.deepEqual(await filesOf(f, id), []);
    f.clock.offset = 0;
    assert.equal((await act(f, f.alice, id, 'get')).statusCode, 404);
  });

  it('a renewal request that lapses leaves the current credential in place', async () => {
    f.clock.offset = 0;
    const { id, csr } = await newX509(f, f.alice);
    const chain = await signAs(f.alice, csr);
    assert.equal((await put(f, f.alice, id, chain)).statusCode, 200);
    const r = await act(f, f.alice, id, 'renew');
    f.clock.offset = HOUR + MIN;
    const late = await put(f, f.alice, id, await signAs(f.alice, r.body));
    assert.equal(late.statusCode, 400);
    assert.equal(JSON.parse(late.body).code, 'CE_ERR_DELEG_KEY_MISMATCH');
    const s = await f.wiring.service.sweep();
    assert.ok(s.lapsedRequests >= 1);
    assert.deepEqual(
      (await filesOf(f, id)).map((n) => n.slice(n.lastIndexOf('.'))),
      ['.proxy'],
    );
    assert.ok((await listed(f, f.alice)).includes(id));
    f.clock.offset = 0;
  });

  it('a token with exp expires like a proxy; one without exp does not', async () => {
    f.clock.offset = 0;
    const mk = async (claims: Record<string, unknown>) => {
      const r = await f.app.inject({
        method: 'POST',
        url: `${base()}?action=new&type=jwt`,
        headers: { ...f.alice.h, 'x-delegation': `bearer ${fakeJwt(claims)}` },
      });
      assert.equal(r.statusCode, 201, r.body);
      return String(r.headers.location).split('/').pop() as string;
    };
    const withExp = await mk({ exp: Math.floor(Date.now() / 1000) + 600 });
    const noExp = await mk({ exp: undefined });
    f.clock.offset = HOUR;
    const ids = await listed(f, f.alice);
    assert.ok(!ids.includes(withExp));
    assert.ok(ids.includes(noExp));
    assert.equal(await f.wiring.credentialFor(withExp, f.alice.owner), undefined);
    f.clock.offset = 0;
  });

  it('the sweep removes files no delegation refers to (a crash between file and database) and nothing else', async () => {
    const orphan = join(f.keyDir, `${'ab'.repeat(16)}-0badcafe.proxy`);
    const foreign = join(f.keyDir, 'README');
    await writeFile(orphan, 'left by a crash', { mode: 0o600 });
    await writeFile(foreign, 'not ours');
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, csr))).statusCode, 200);
    const s = await f.wiring.service.sweep();
    assert.ok(s.orphanFiles >= 1);
    const names = await readdir(f.keyDir);
    assert.ok(!names.includes(`${'ab'.repeat(16)}-0badcafe.proxy`));
    assert.ok(names.includes('README'));
    assert.equal((await filesOf(f, id)).length, 1, 'live files are kept');
  });
});

describe('deleting a delegation that jobs use', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture();
  });
  after(() => f.close());

  it('is refused (409) while a job that has not ended uses it, allowed once the job has ended', async () => {
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, csr))).statusCode, 200);
    const jobs = new JobStore(f.db);
    const uses = { queue: 'default', delegationId: id, delegationIds: [id] };
    jobs.insertMany([
      newJobRow('job1', f.alice.owner, { ...uses, state: 'INLRMS', restState: 'RUNNING' }),
      newJobRow('job2', f.alice.owner, { ...uses, state: 'FINISHED', restState: 'FINISHED' }),
    ]);
    const r = await act(f, f.alice, id, 'delete');
    assert.equal(r.statusCode, 409);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_DELEG_IN_USE');
    assert.match(JSON.parse(r.body).reason, /1 job/);
    assert.ok((await listed(f, f.alice)).includes(id), 'still there');
    f.db.prepare("UPDATE jobs SET state = 'FINISHED', rest_state = 'FINISHED' WHERE id = 'job1'").run();
    assert.equal((await act(f, f.alice, id, 'delete')).statusCode, 202);
    assert.ok(!(await listed(f, f.alice)).includes(id));
    assert.deepEqual(await filesOf(f, id), []);
  });
});

describe('one delegation, many jobs, one renewal', () => {
  let f: Fixture;
  before(async () => {
    f = await makeFixture();
  });
  after(() => f.close());

  it('every job naming the delegation gets the renewed credential on its next transfer', async () => {
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, csr))).statusCode, 200);
    const first = await f.wiring.credentialFor(id, f.alice.owner);
    const r = await act(f, f.alice, id, 'renew');
    const renewed = await signAs(f.alice, r.body);
    assert.equal((await put(f, f.alice, id, renewed)).statusCode, 200);
    // Two jobs of the same owner ask at transfer time: both get the renewed proxy.
    const [a, b] = await Promise.all([
      f.wiring.credentialFor(id, f.alice.owner),
      f.wiring.credentialFor(id, f.alice.owner),
    ]);
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, first);
    assert.ok(a?.kind === 'x509' && a.certChainPem.startsWith(renewed.slice(0, 200)));
  });

  it('concurrent renewals and PUTs never leave a delegation without a usable credential', async () => {
    const { id, csr } = await newX509(f, f.alice);
    assert.equal((await put(f, f.alice, id, await signAs(f.alice, csr))).statusCode, 200);
    const rounds = await Promise.all(
      [0, 1, 2].map(async () => {
        const r = await act(f, f.alice, id, 'renew');
        return put(f, f.alice, id, await signAs(f.alice, r.body));
      }),
    );
    // Only the last request handed out has its key; the others are answered 400 (key mismatch), never 5xx.
    for (const p of rounds) assert.ok(p.statusCode === 200 || p.statusCode === 400, p.body);
    assert.ok(rounds.some((p) => p.statusCode === 200));
    const c = await f.wiring.credentialFor(id, f.alice.owner);
    assert.equal(c?.kind, 'x509');
    assert.equal((await filesOf(f, id)).filter((n) => n.endsWith('.proxy')).length, 1);
  });
});
