// A root service without a mapping (the embedded defaults `npm start` uses) never runs a
// grid user's job as root: every job runs as the default account (`accounts.default`,
// `nobody`), its session directory is that account's, and the start says so. Before
// this, the job's `id -u` printed 0.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { assertRoot, skipUnlessRoot } from '../helpers/local-accounts.js';

describe(
  'a root service without a mapping runs jobs as the default account',
  { skip: skipUnlessRoot('a service started as root') },
  () => {
    let stateDir: string;
    let ceres: RunningCeres;
    let user: Client;
    const nobody = { uid: 0, gid: 0 };

    before(async () => {
      assertRoot();
      nobody.uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
      nobody.gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
      stateDir = tempDir('default-account');
      ceres = await startCeres({ stateDir });
      user = new Client(ceres.url, join(ceres.pkiDir, 'userproxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    });
    after(async () => {
      await user?.close();
      if (ceres) await stopCeres(ceres);
      if (stateDir) removeDir(stateDir);
    });

    it('says at start which account jobs run as', () => {
      assert.match(
        ceres.output(),
        new RegExp(`^ceres: jobs run as local account nobody \\(uid ${nobody.uid}; accounts\\.default`, 'm'),
      );
    });

    it("runs the job as nobody, never as root, in a session directory that is nobody's", async () => {
      const [j] = await user.submit(
        '&(executable="/bin/sh")(arguments="-c" "id -u; id -un; touch made-by-job")(stdout="out")(outputfiles=("out" "")("made-by-job" ""))',
      );
      const states = await user.waitFor([j.id], ['FINISHED', 'FAILED']);
      assert.deepEqual([...states.values()], ['FINISHED']);
      const r = await user.req('GET', `/rest/1.1/jobs/${j.id}/session/out`, undefined, { accept: '*/*' });
      assert.equal(r.status, 200);
      assert.equal(r.text, `${nobody.uid}\nnobody\n`);
      const dir = statSync(join(stateDir, 'sessions', j.id));
      assert.deepEqual([dir.uid, dir.gid], [nobody.uid, nobody.gid]);
      assert.equal(statSync(join(stateDir, 'sessions', j.id, 'made-by-job')).uid, nobody.uid);
    });

    it("publishes the account as the job's LocalOwner", async () => {
      const [j] = await user.submit('&(executable="/bin/true")');
      const [i] = await user.action('info', [j.id]);
      assert.equal(i.info_document.ComputingActivity.LocalOwner, 'nobody');
    });
  },
);
