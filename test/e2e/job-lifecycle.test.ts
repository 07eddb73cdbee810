// End to end over real TLS against `ceres serve` with the fork backend: jobs run,
// fail, are killed, restarted, cleaned and expire, and land in the right state with
// readable reasons.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client, processAlive, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

describe('job life cycle (fork backend)', () => {
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres({
      config: { engine: { maxRunningJobs: 4 }, cluster: { sessionLifetimeSeconds: 60, queues: [{ name: 'main' }] } },
    });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('/bin/echo hello as xRSL reaches FINISHED with its stdout in the session directory', async () => {
    const [item] = await c.submit('&(executable="/bin/echo")(arguments="hello")(stdout="out.txt")(jobname="e1")');
    assert.equal(item['status-code'], '201');
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FINISHED');
    const out = await c.req('GET', `/rest/1.1/jobs/${item.id}/session/out.txt`);
    assert.equal(out.status, 200);
    assert.equal(out.text, 'hello\n');
    const errors = await c.req('GET', `/rest/1.1/jobs/${item.id}/diagnose/errors`);
    const moves = [...errors.text.matchAll(/Job state change (\S+) -> (\S+)/g)].map((m) => `${m[1]}>${m[2]}`);
    assert.deepEqual(moves, [
      'ACCEPTED>PREPARING',
      'PREPARING>SUBMIT',
      'SUBMIT>INLRMS',
      'INLRMS>FINISHING',
      'FINISHING>FINISHED',
    ]);
    const diag = await c.req('GET', `/rest/1.1/jobs/${item.id}/diagnose/diag`);
    assert.match(diag.text, /exitcode=0/);
  });

  it('/bin/echo as ADL reaches FINISHED; info shows exit code and times', async () => {
    const adl = `<ActivityDescription xmlns="http://www.eu-emi.eu/es/2010/12/adl"><ActivityIdentification><Name>adl-echo</Name></ActivityIdentification><Application><Executable><Path>/bin/echo</Path><Argument>hi</Argument></Executable><Output>o.txt</Output></Application></ActivityDescription>`;
    const [item] = await c.submit(adl);
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FINISHED');
    const [info] = await c.action('info', [item.id]);
    const act = info.info_document.ComputingActivity;
    assert.ok((act.State as string[]).includes('arcrest:FINISHED'));
    assert.equal(act.ExitCode, '0');
    assert.equal(act.Name, 'adl-echo');
    assert.match(act.EndTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${item.id}/session/o.txt`)).text, 'hi\n');
  });

  it('a non-zero exit code ends FAILED with the exit code in the reason', async () => {
    const [item] = await c.submit('&(executable="/bin/sh")(arguments="-c" "exit 3")');
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FAILED');
    const [info] = await c.action('info', [item.id]);
    assert.match(JSON.stringify(info.info_document.ComputingActivity.Error), /exit code 3/);
    const failed = await c.req('GET', `/rest/1.1/jobs/${item.id}/diagnose/failed`);
    assert.match(failed.text, /exit code 3/);
  });

  it('a missing executable fails with a readable reason', async () => {
    const [item] = await c.submit('&(executable="/no/such/program")');
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FAILED');
    const [info] = await c.action('info', [item.id]);
    assert.match(JSON.stringify(info.info_document.ComputingActivity.Error), /not found/);
  });

  it('a wall-time overrun ends FAILED saying so', async () => {
    const [item] = await c.submit('&(executable="/bin/sleep")(arguments="30")(walltime="1 second")');
    const st = await c.waitFor([item.id], FINAL, 60_000);
    assert.equal(st.get(item.id), 'FAILED');
    const [info] = await c.action('info', [item.id]);
    assert.match(JSON.stringify(info.info_document.ComputingActivity.Error), /wall time/i);
  });

  it('kill of a running sleep job: KILLING then KILLED, and the process is gone', async () => {
    const [item] = await c.submit('&(executable="/bin/sleep")(arguments="300")');
    await c.waitFor([item.id], ['RUNNING']);
    const [info] = await c.action('info', [item.id]);
    const pid = Number(info.info_document.ComputingActivity.LocalIDFromManager);
    assert.ok(pid > 0);
    const [k] = await c.action('kill', [item.id]);
    assert.equal(k['status-code'], '202');
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'KILLED');
    assert.equal(processAlive(pid), false);
    const [again] = await c.action('kill', [item.id]);
    assert.equal(again['status-code'], '409');
  });

  it('kill of a job waiting for an upload: KILLED without running', async () => {
    const [item] = await c.submit('&(executable="/bin/sh")(arguments="in.sh")(inputfiles=("in.sh" ""))');
    await c.waitFor([item.id], ['PREPARING']);
    await c.action('kill', [item.id]);
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'KILLED');
  });

  it('an uploaded input lets the job run', async () => {
    const [item] = await c.submit('&(executable="run.sh")(inputfiles=("run.sh" ""))(stdout="o")');
    await c.waitFor([item.id], ['PREPARING']);
    const put = await c.req('PUT', `/rest/1.1/jobs/${item.id}/session/run.sh`, '#!/bin/sh\necho uploaded-ran\n');
    assert.equal(put.status, 200);
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FINISHED');
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${item.id}/session/o`)).text, 'uploaded-ran\n');
  });

  it('restart of a failed job with reruns left runs it again; without reruns it is refused', async () => {
    const [item] = await c.submit(
      '&(executable="/bin/sh")(arguments="-c" "echo run >> count; test -f ok")(rerun=1)(stdout="o")',
    );
    assert.equal((await c.waitFor([item.id], FINAL)).get(item.id), 'FAILED');
    // The second attempt succeeds once the flag file exists.
    assert.equal((await c.req('PUT', `/rest/1.1/jobs/${item.id}/session/ok`, 'x')).status, 200);
    const [r] = await c.action('restart', [item.id]);
    assert.equal(r['status-code'], '202', JSON.stringify(r));
    await c.waitFor(
      [item.id],
      ['PREPARED', 'ACCEPTED', 'PREPARING', 'SUBMITTING', 'QUEUING', 'RUNNING', 'FINISHING', 'FINISHED'],
      10_000,
    );
    assert.equal((await c.waitFor([item.id], FINAL)).get(item.id), 'FINISHED');
    const [again] = await c.action('restart', [item.id]);
    assert.equal(again['status-code'], '409');
    const [never] = await c.submit('&(executable="/bin/false")');
    await c.waitFor([never.id], FINAL);
    const [no] = await c.action('restart', [never.id]);
    assert.equal(no['status-code'], '409');
    assert.match(no.reason, /No more restarts allowed/);
  });

  it('clean of a finished job removes it; clean of a running job waits until it ends', async () => {
    const [a] = await c.submit('&(executable="/bin/true")');
    await c.waitFor([a.id], FINAL);
    const [cl] = await c.action('clean', [a.id]);
    assert.equal(cl['status-code'], '202');
    const st = await c.waitFor([a.id], ['HTTP404'], 10_000);
    assert.equal(st.get(a.id), 'HTTP404');
    assert.equal(existsSync(join(ceres.stateDir, 'sessions', a.id)), false);
    const [b] = await c.submit('&(executable="/bin/sleep")(arguments="1")');
    await c.waitFor([b.id], ['RUNNING']);
    const [cb] = await c.action('clean', [b.id]);
    assert.equal(cb['status-code'], '202');
    assert.equal((await c.waitFor([b.id], ['HTTP404'], 20_000)).get(b.id), 'HTTP404');
  });

  it('runs many jobs at once to completion', async () => {
    const body = `+${Array.from({ length: 50 }, (_, i) => `(&(executable="/bin/echo")(arguments="${i}")(stdout="o"))`).join('')}`;
    const items = await c.submit(body);
    assert.equal(items.length, 50);
    const st = await c.waitFor(
      items.map((i) => i.id),
      FINAL,
      120_000,
    );
    assert.ok(
      [...st.values()].every((s) => s === 'FINISHED'),
      JSON.stringify([...st.values()]),
    );
  });
});

describe('session lifetime', () => {
  it('a finished job becomes WIPED when its session lifetime ends: session gone, record kept', async () => {
    const ceres = await startCeres({ config: { cluster: { sessionLifetimeSeconds: 2, queues: [{ name: 'main' }] } } });
    const c = Client.forUser(ceres);
    try {
      const [item] = await c.submit('&(executable="/bin/echo")(arguments="x")(stdout="o")');
      assert.equal((await c.waitFor([item.id], FINAL)).get(item.id), 'FINISHED');
      assert.equal(existsSync(join(ceres.stateDir, 'sessions', item.id)), true);
      const st = await c.waitFor([item.id], ['WIPED'], 30_000);
      assert.equal(st.get(item.id), 'WIPED');
      // The state is persisted before its effect (the deletion) runs: give it a moment.
      const gone = Date.now() + 10_000;
      while (existsSync(join(ceres.stateDir, 'sessions', item.id)) && Date.now() < gone)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal(existsSync(join(ceres.stateDir, 'sessions', item.id)), false);
      const [info] = await c.action('info', [item.id]);
      assert.ok((info.info_document.ComputingActivity.State as string[]).includes('arcrest:WIPED'));
      assert.equal((await c.req('GET', `/rest/1.1/jobs/${item.id}/session/o`)).status, 404);
    } finally {
      await c.close();
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });
});
