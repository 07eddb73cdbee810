// Per-user limits on a shared host, against the real service with two users of the dev
// PKI: a user's flood holds at most engine.maxRunningJobsPerUser batch jobs and another
// user's single job starts at once; past jobs.maxActiveJobsPerUser, further descriptions
// get a per-item 503 "No more jobs allowed" and nothing is created for them.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const RUNNING_PER_USER = 2;
const RUNNING_ALL = 4;
const ACTIVE_PER_USER = 12;
const FLOOD = 10;
/** REST states of jobs submitted to or in the batch system. */
const IN_BATCH = new Set(['SUBMITTING', 'QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER']);
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];
const SLEEP = '(&(executable="/bin/sleep")(arguments="120"))';

describe('per-user limits (real service, two users)', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let flood: string[] = [];
  const bobJobs: string[] = [];

  before(async () => {
    ceres = await startCeres({
      config: {
        engine: { maxRunningJobs: RUNNING_ALL, maxRunningJobsPerUser: RUNNING_PER_USER },
        jobs: { maxActiveJobsPerUser: ACTIVE_PER_USER },
      },
    });
    await addDevUser(ceres.pkiDir, 'bob');
    alice = Client.forUser(ceres);
    bob = new Client(ceres.url, join(ceres.pkiDir, 'bob-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
  });

  after(async () => {
    // End every job (the fork backend's processes too) before the service stops.
    for (const [c, ids] of [
      [alice, () => alice.req('GET', '/rest/1.1/jobs').then((r) => (r.json().job as any[]).map((j) => j.id as string))],
      [bob, async () => bobJobs],
    ] as const) {
      if (!c) continue;
      const list = await ids();
      if (list.length > 0) {
        await c.action('kill', list);
        await c.waitFor(list, ENDED, 60_000);
      }
    }
    await alice?.close();
    await bob?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it(`one user's flood runs at most ${RUNNING_PER_USER} at once; another user's job runs promptly`, async () => {
    flood = (await alice.submit(`+${SLEEP.repeat(FLOOD)}`)).map((j) => j.id as string);
    assert.equal(flood.length, FLOOD);
    // Wait until alice's jobs have settled: some in the batch system, the rest waiting.
    const deadline = Date.now() + 60_000;
    let most = 0;
    while (Date.now() < deadline) {
      const st = [...(await alice.status(flood)).values()];
      const inBatch = st.filter((s) => IN_BATCH.has(s)).length;
      most = Math.max(most, inBatch);
      if (inBatch >= RUNNING_PER_USER && inBatch + st.filter((s) => s === 'PREPARED').length === FLOOD) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const t0 = Date.now();
    const [b] = await bob.submit('&(executable="/bin/echo")(arguments="mine")(stdout="out")');
    bobJobs.push(b.id);
    const st = await bob.waitFor([b.id], ENDED, 20_000);
    assert.equal(st.get(b.id), 'FINISHED', `bob's job waited behind alice's flood (${Date.now() - t0} ms)`);
    assert.equal((await bob.req('GET', `/rest/1.1/jobs/${b.id}/session/out`)).text, 'mine\n');
    assert.equal(most, RUNNING_PER_USER, `alice had up to ${most} jobs in the batch system`);

    // Alice still holds no more than her share.
    const after = await alice.status(flood);
    assert.equal([...after.values()].filter((s) => IN_BATCH.has(s)).length, RUNNING_PER_USER);
  });

  it("when one of her jobs ends, the user's next waiting job takes its place", async () => {
    const running = [...(await alice.status(flood)).entries()].filter(([, s]) => IN_BATCH.has(s)).map(([id]) => id);
    await alice.action('kill', [running[0] as string]);
    const deadline = Date.now() + 30_000;
    let inBatch = 0;
    while (Date.now() < deadline) {
      const st = await alice.status(flood);
      inBatch = [...st.values()].filter((s) => IN_BATCH.has(s)).length;
      if (st.get(running[0] as string) === 'KILLED' && inBatch === RUNNING_PER_USER) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(inBatch, RUNNING_PER_USER);
  });

  it(`past ${ACTIVE_PER_USER} active jobs, further items get 503 No more jobs allowed and nothing is created`, async () => {
    // Alice has FLOOD - 1 active jobs (one was killed): room for 3.
    const listBefore = (await alice.req('GET', '/rest/1.1/jobs')).json().job.length;
    /** Three jobs more, and no session directory but stored jobs' (they are made on first use). */
    const nothingMore = async (): Promise<void> => {
      const listed = (await alice.req('GET', '/rest/1.1/jobs')).json().job as { id: string }[];
      assert.equal(listed.length, listBefore + 3);
      const stored = new Set([...listed.map((j) => j.id), ...bobJobs]);
      const strays = readdirSync(join(ceres.stateDir, 'sessions')).filter((n) => !stored.has(n.slice(0, 26)));
      assert.deepEqual(strays, []);
    };
    const items = await alice.submit(`+${SLEEP.repeat(5)}`);
    assert.deepEqual(
      items.map((i) => i['status-code']),
      ['201', '201', '201', '503', '503'],
    );
    for (const i of items.slice(3)) {
      assert.match(i.reason, /^No more jobs allowed: at most 12 active jobs per user/);
      assert.equal(i.id, undefined);
    }
    flood.push(...items.slice(0, 3).map((i) => i.id as string));
    await nothingMore();

    // A single description now: refused, nothing made.
    const [one] = await alice.submit(SLEEP.slice(1, -1));
    assert.equal(one['status-code'], '503');
    // 1.1 instances: instances_min must fit (A-REX's rule for its job limit), else the request is refused.
    const r = await alice.req('POST', '/rest/1.1/jobs?action=new&instances=3&instances_min=1', SLEEP.slice(1, -1));
    assert.equal(r.status, 403);
    assert.match(r.text, /No more jobs allowed/);
    await nothingMore();

    // The other user is not affected.
    const [b] = await bob.submit('&(executable="/bin/true")');
    assert.equal(b['status-code'], '201');
    bobJobs.push(b.id);
  });

  it('ended jobs do not count: after two are killed, two more are accepted, and instances are trimmed to the room', async () => {
    const victims = flood.slice(-2);
    await alice.action('kill', victims);
    const st = await alice.waitFor(victims, ['KILLED'], 60_000);
    assert.deepEqual([...st.values()], ['KILLED', 'KILLED']);
    const r = await alice.req('POST', '/rest/1.1/jobs?action=new&instances=5&instances_min=1', SLEEP.slice(1, -1));
    assert.equal(r.status, 201);
    const items = r.json().job as any[];
    assert.deepEqual(
      items.map((i) => i['status-code']),
      ['201', '201'],
    );
    const [more] = await alice.submit(SLEEP.slice(1, -1));
    assert.equal(more['status-code'], '503');
  });

  it('concurrent submissions of one user never exceed the cap together', async () => {
    const active = (await alice.req('GET', '/rest/1.1/jobs'))
      .json()
      .job.filter((j: any) => !ENDED.includes(j.state))
      .map((j: any) => j.id as string);
    assert.equal(active.length, ACTIVE_PER_USER);
    const victims = active.slice(0, 4);
    await alice.action('kill', victims);
    await alice.waitFor(victims, ['KILLED'], 60_000);
    const answers = await Promise.all([1, 2, 3].map(() => alice.submit(`+${SLEEP.repeat(3)}`)));
    const codes = answers.flat().map((i) => i['status-code']);
    assert.equal(codes.filter((c) => c === '201').length, 4);
    assert.equal(codes.filter((c) => c === '503').length, 5);
    const now = (await alice.req('GET', '/rest/1.1/jobs')).json().job.filter((j: any) => !ENDED.includes(j.state));
    assert.equal(now.length, ACTIVE_PER_USER);
  });

  it('the info document publishes the running limits on each share (GLUE2 MaxRunningJobs, MaxUserRunningJobs)', async () => {
    const r = await alice.req('GET', '/rest/1.1/info');
    assert.equal(r.status, 200);
    const text = JSON.stringify(r.json());
    assert.match(text, new RegExp(`"MaxRunningJobs":"${RUNNING_ALL}"`));
    assert.match(text, new RegExp(`"MaxUserRunningJobs":"${RUNNING_PER_USER}"`));
  });
});
