// `ceres admin` against the real service (child process) and its state directory: job
// listing with filters, show, kill/clean/restart of a user's job through the running
// engine, requests made while the service is down, delegations, status.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { fakeJwt } from '../delegations/fixture.js';
import { admin } from './cli.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];
const CONFIG = { cluster: { queues: [{ name: 'main' }, { name: 'short' }] } };

describe('ceres admin: jobs, delegations, status', () => {
  let ceres: RunningCeres;
  let c: Client;
  let finished: string;
  let failed: string;
  before(async () => {
    ceres = await startCeres({ config: CONFIG });
    c = Client.forUser(ceres);
    const [a] = await c.submit('&(executable="/bin/echo")(arguments="hi")(queue="main")');
    const [b] = await c.submit('&(executable="/bin/sh")(arguments="-c" "exit 3")(queue="short")');
    finished = a.id;
    failed = b.id;
    await c.waitFor([finished, failed], FINAL);
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('list shows jobs of every owner as a table and as JSON', async () => {
    const t = await admin(ceres.stateDir, 'list');
    assert.equal(t.code, 0, t.stderr);
    assert.match(t.stdout, /^ID\s+STATE\s+QUEUE\s+AGE\s+OWNER/);
    assert.match(t.stdout, new RegExp(`${finished}\\s+FINISHED\\s+main`));
    assert.match(t.stdout, new RegExp(`${failed}\\s+FAILED\\s+short`));
    const j = await admin(ceres.stateDir, '--json', 'list');
    const jobs = j.json() as { id: string; owner: string }[];
    assert.deepEqual(jobs.map((x) => x.id).sort(), [finished, failed].sort());
    assert.match(jobs[0]!.owner, /CN=/);
  });

  it('list filters by state, queue, owner and age', async () => {
    const ids = async (...f: string[]) =>
      ((await admin(ceres.stateDir, '--json', 'list', ...f)).json() as { id: string }[]).map((x) => x.id);
    assert.deepEqual(await ids('--state', 'failed'), [failed]);
    assert.deepEqual(await ids('--state', 'FINISHED,FAILED', '--queue', 'main'), [finished]);
    assert.deepEqual(await ids('--owner', 'CN=nobody-such'), []);
    assert.equal((await ids('--owner', 'CN=')).length, 2);
    assert.deepEqual(await ids('--older-than', '1h'), []);
    assert.equal((await ids('--newer-than', '1h')).length, 2);
    assert.equal((await ids('--limit', '1')).length, 1);
  });

  it('bad filters are refused with what was expected (exit 1)', async () => {
    const s = await admin(ceres.stateDir, 'list', '--state', 'BOGUS');
    assert.equal(s.code, 1);
    assert.match(s.stderr, /--state: unknown state BOGUS; known: .*RUNNING/);
    const a = await admin(ceres.stateDir, 'list', '--older-than', '5 parsecs');
    assert.equal(a.code, 1);
    assert.match(a.stderr, /--older-than: '5 parsecs' is not an age/);
    const l = await admin(ceres.stateDir, 'list', '--limit', '0');
    assert.equal(l.code, 1);
    assert.match(l.stderr, /--limit/);
  });

  it('show prints one job of any owner; an unknown id is an error', async () => {
    const s = await admin(ceres.stateDir, '--json', 'show', failed);
    assert.equal(s.code, 0, s.stderr);
    const j = s.json();
    assert.equal(j.state, 'FAILED');
    assert.equal(j.exitCode, 3);
    assert.equal(j.queue, 'short');
    assert.equal(j.accounting.length, 1);
    const t = await admin(ceres.stateDir, 'show', finished);
    assert.match(t.stdout, /state\s+FINISHED/);
    const u = await admin(ceres.stateDir, 'show', 'f'.repeat(32));
    assert.equal(u.code, 1);
    assert.match(u.stderr, /no job f{32}/);
  });

  it('kill: a running job of a user is killed through the service; unknown and finished ids fail (exit 1)', async () => {
    const [r] = await c.submit('&(executable="/bin/sleep")(arguments="300")');
    await c.waitFor([r.id], ['RUNNING'], 30_000);
    const k = await admin(ceres.stateDir, 'kill', r.id, 'e'.repeat(32), finished);
    assert.equal(k.code, 1, 'some ids failed');
    assert.match(k.stdout, new RegExp(`${r.id}\\s+202\\s+Queued for killing`));
    assert.match(k.stdout, /e{32}\s+404\s+Job not found/);
    assert.match(k.stdout, new RegExp(`${finished}\\s+409\\s`));
    assert.equal((await c.waitFor([r.id], FINAL, 30_000)).get(r.id), 'KILLED');
    const ok = await admin(ceres.stateDir, '--json', 'clean', r.id);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.deepEqual(ok.json(), [{ target: r.id, status: 202, reason: 'Queued for cleaning' }]);
  });

  it('restart: a failed job is restarted; a finished one is refused', async () => {
    const [r] = await c.submit('&(executable="/bin/sh")(arguments="-c" "exit 4")(rerun=1)');
    await c.waitFor([r.id], FINAL);
    const bad = await admin(ceres.stateDir, 'restart', finished);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /409/);
    const ok = await admin(ceres.stateDir, 'restart', r.id);
    assert.equal(ok.code, 0, ok.stdout);
    assert.match(ok.stdout, /202\s+Queued for restarting/);
  });

  it('delegations list, show and revoke (any owner); unknown ids fail', async () => {
    const created = await c.req('POST', '/rest/1.1/delegations?action=new&type=jwt', undefined, {
      'x-delegation': `bearer ${fakeJwt()}`,
    });
    assert.equal(created.status, 201, created.text);
    const id = String(created.headers.location).split('/').pop()!;
    const l = await admin(ceres.stateDir, 'delegations', 'list');
    assert.match(l.stdout, new RegExp(`${id}\\s+jwt`));
    const s = await admin(ceres.stateDir, '--json', 'delegations', 'show', id);
    assert.equal(s.json().type, 'jwt');
    const r = await admin(ceres.stateDir, 'delegations', 'revoke', id);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /200\s+Delegation revoked/);
    assert.doesNotMatch((await admin(ceres.stateDir, 'delegations', 'list')).stdout, new RegExp(id));
    const u = await admin(ceres.stateDir, 'delegations', 'revoke', id);
    assert.equal(u.code, 1);
    assert.match(u.stdout, /404\s+Delegation not found/);
    const us = await admin(ceres.stateDir, 'delegations', 'show', 'nope');
    assert.equal(us.code, 1);
    assert.match(us.stderr, /no delegation nope/);
  });

  it('status is one screen: the running service, jobs per state and queue, accounting', async () => {
    const s = await admin(ceres.stateDir, 'status');
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, new RegExp(`service:\\s+running \\(pid ${ceres.child.pid}\\)`));
    assert.match(s.stdout, /accepting jobs: yes/);
    assert.match(s.stdout, /jobs by state:.*FAILED/);
    assert.ok(s.stdout.split('\n').length < 25);
    const j = (await admin(ceres.stateDir, '--json', 'status')).json();
    assert.equal(j.service.pid, ceres.child.pid);
    assert.ok(j.accountingRecords >= 2);
  });

  it('a state directory without a database is an error naming the directory', async () => {
    const r = await admin('/nonexistent-ceres-state', 'list');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no Ceres database in \/nonexistent-ceres-state/);
  });

  it('a kill asked while the service is down is recorded and carried out at its next start', async () => {
    const [r] = await c.submit('&(executable="/bin/sleep")(arguments="300")');
    await c.waitFor([r.id], ['RUNNING'], 30_000);
    await c.close();
    await stopCeres(ceres);
    const k = await admin(ceres.stateDir, 'kill', r.id);
    assert.equal(k.code, 0, k.stdout + k.stderr);
    assert.match(k.stdout, /recorded\s+recorded; the service is not running/);
    const down = await admin(ceres.stateDir, 'status');
    assert.match(down.stdout, /service:\s+not running/);
    assert.match(down.stdout, /admin requests: 1 waiting/);
    ceres = await startCeres({ stateDir: ceres.stateDir, config: CONFIG });
    c = Client.forUser(ceres);
    assert.equal((await c.waitFor([r.id], FINAL, 30_000)).get(r.id), 'KILLED');
  });
});
