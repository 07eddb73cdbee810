/**
 * Jobs waiting for their client's uploads hold no file descriptor of the service.
 *
 * Stage-in reaches a session directory through a lease on its verified descriptor. Held
 * for a whole stage-in, the lease made every job waiting for uploads (which may wait for
 * hours) keep a descriptor open: 30,000 such jobs of one user exhausted the process's
 * descriptors, and every other user's requests and jobs failed with EMFILE. Leases are
 * now taken per operation; this test submits many waiting jobs against the real service
 * and counts the service's open descriptors, then checks the uploads still complete
 * the jobs (the lease is taken for each look at the files).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const JOBS = 600;
const WAITING = '(&(executable="/bin/cat")(arguments="in")(inputfiles=("in" "")))';

const openFds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

describe('jobs waiting for uploads', () => {
  let ceres: RunningCeres;
  let client: Client;
  let ids: string[] = [];
  before(async () => {
    ceres = await startCeres();
    client = new Client(ceres.url, join(ceres.pkiDir, 'userproxy.pem'), join(ceres.pkiDir, 'ca.pem'));
  });
  after(async () => {
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it(`${JOBS} jobs waiting for their inputs do not hold a descriptor each`, async () => {
    const pid = ceres.child.pid as number;
    const before = openFds(pid);
    const made = await client.submit(`+${WAITING.repeat(JOBS)}`);
    ids = made.map((j) => j.id as string);
    assert.equal(made.filter((j) => j['status-code'] === '201').length, JOBS);
    // Every job reaches its wait for the upload (PREPARING) before we count.
    await client.waitFor(ids, ['PREPARING'], 120_000);
    // Their stage-in starts just after the state changes and its first look at the files
    // may still be under way: count over a few seconds, until the count has settled (it
    // does within a second here; the old code held one descriptor per job for good).
    const settleFrom = Date.now() + 3_000;
    let now = openFds(pid);
    for (
      const deadline = Date.now() + 30_000;
      (Date.now() < settleFrom || now - before >= JOBS / 4) && Date.now() < deadline;
      now = openFds(pid)
    ) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.ok(now - before < JOBS / 4, `open descriptors grew from ${before} to ${now} with ${JOBS} jobs waiting`);
  });

  it('an upload still completes its waiting job', async () => {
    const id = ids[0] as string;
    const put = await client.req('PUT', `/rest/1.1/jobs/${id}/session/in`, 'hello\n');
    assert.equal(put.status, 200, put.text);
    const st = await client.waitFor([id], ['FINISHED', 'FAILED'], 120_000);
    assert.equal(st.get(id), 'FINISHED');
    const out = await client.req('GET', `/rest/1.1/jobs/${id}/session/`);
    assert.equal(out.status, 200);
  });
});
