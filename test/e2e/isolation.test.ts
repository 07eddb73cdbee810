// Over real TLS with two users of the dev PKI (the second made like `ceres pki user`):
// the second user can neither see nor touch the first user's jobs, files, diagnose
// files or delegations, and every attempt looks exactly like a missing job.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

describe('two users', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let job: string;
  before(async () => {
    ceres = await startCeres();
    await addDevUser(ceres.pkiDir, 'bob');
    alice = Client.forUser(ceres);
    bob = new Client(ceres.url, join(ceres.pkiDir, 'bob-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    const [item] = await alice.submit('&(executable="/bin/echo")(arguments="secret")(stdout="o")');
    job = item.id;
    await alice.waitFor([job], ['FINISHED']);
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it("bob does not see alice's job in listings", async () => {
    assert.deepEqual((await bob.req('GET', '/rest/1.1/jobs')).json(), { job: [] });
    assert.equal((await alice.req('GET', '/rest/1.1/jobs')).json().job.length, 1);
  });

  it("every bulk action on alice's job answers bob 404 Job not found, exactly as for a made-up id", async () => {
    for (const action of ['status', 'info', 'kill', 'clean', 'restart', 'delegations']) {
      const [real, fake] = await bob.action(action, [job, 'zzzzzzzzzzzzzzzzzzzzzzzzzz']);
      assert.equal(real['status-code'], '404', action);
      assert.equal(real.reason, fake.reason, action);
    }
    assert.equal((await alice.status([job])).get(job), 'FINISHED');
  });

  it("session files and diagnose files of alice's job are 404 for bob, and nothing changes", async () => {
    const s = `/rest/1.1/jobs/${job}/session`;
    for (const [m, p, body] of [
      ['GET', `${s}/o`, undefined],
      ['GET', s, undefined],
      ['PUT', `${s}/evil`, 'x'],
      ['DELETE', `${s}/o`, undefined],
      ['PROPFIND', s, undefined],
      ['GET', `/rest/1.1/jobs/${job}/diagnose/errors`, undefined],
    ] as const) {
      const r = await bob.req(m, p, body, m === 'PROPFIND' ? { depth: '1' } : {});
      assert.equal(r.status, 404, `${m} ${p}`);
    }
    assert.equal((await alice.req('GET', `${s}/o`)).text, 'secret\n');
    assert.equal((await alice.req('GET', `${s}/evil`)).status, 404);
  });
});
