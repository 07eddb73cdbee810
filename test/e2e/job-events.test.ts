// End to end over real TLS: the jobs the service runs leave their REST state changes in the
// durable event sequence, chained and complete, and the sequence goes on after a kill -9.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { JobEvents, type JobEvent } from '../../src/store/job-events.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

/** The events stored so far, read as another process would (read-only, beside the service). */
function eventsIn(stateDir: string): JobEvent[] {
  const db = new Database(join(stateDir, 'ceres.db'), { readonly: true });
  try {
    return new JobEvents(db).allAfter(0, 100_000);
  } finally {
    db.close();
  }
}

describe('job event sequence (fork backend, real service)', () => {
  const stateDir = tempDir('events');
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres({ stateDir, config: { cluster: { queues: [{ name: 'main' }] } } });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('each job has a chain of events from ACCEPTING to its end, with exit code and reason at the end', async () => {
    const [ok] = await c.submit('&(executable="/bin/true")(jobname="ok")');
    const [bad] = await c.submit('&(executable="/bin/false")(jobname="bad")');
    const st = await c.waitFor([ok.id, bad.id], FINAL);
    assert.equal(st.get(ok.id), 'FINISHED');
    assert.equal(st.get(bad.id), 'FAILED');
    const all = eventsIn(stateDir);
    for (const id of [ok.id, bad.id]) {
      const mine = all.filter((e) => e.jobId === id);
      assert.equal(mine[0]!.state, 'ACCEPTING');
      assert.equal(mine[0]!.previousState, null);
      for (let i = 1; i < mine.length; i++) {
        assert.equal(mine[i]!.previousState, mine[i - 1]!.state, `${id}: event ${i} follows the one before`);
        assert.ok(mine[i]!.seq > mine[i - 1]!.seq);
        assert.ok(mine[i]!.at >= mine[i - 1]!.at);
      }
      assert.ok(
        mine.some((e) => e.state === 'RUNNING' || e.state === 'SUBMITTING'),
        'it went through the batch',
      );
    }
    const endOk = all.filter((e) => e.jobId === ok.id).at(-1)!;
    assert.equal(endOk.state, 'FINISHED');
    assert.equal(endOk.exitCode, 0);
    const endBad = all.filter((e) => e.jobId === bad.id).at(-1)!;
    assert.equal(endBad.state, 'FAILED');
    assert.equal(endBad.exitCode, 1);
    assert.ok((endBad.failureReason ?? '').length > 0, 'a failed job says why');
  });

  it('after a kill -9 and a start on the same state the sequence goes on where it was', async () => {
    const before = eventsIn(stateDir).at(-1)!.seq;
    await c.close();
    await stopCeres(ceres, 'SIGKILL');
    ceres = await startCeres({ stateDir, config: { cluster: { queues: [{ name: 'main' }] } } });
    c = Client.forUser(ceres);
    const [j] = await c.submit('&(executable="/bin/true")(jobname="after")');
    await c.waitFor([j.id], FINAL);
    const mine = eventsIn(stateDir).filter((e) => e.jobId === j.id);
    assert.equal(mine[0]!.seq, before + 1, 'the next number, nothing reused, nothing skipped');
    assert.equal(mine.at(-1)!.state, 'FINISHED');
  });
});
