// The state directory as the running service leaves it, seen by a real local account
// (what a job under that account could try): the host key, the database, the
// delegations, the control files and the batch backend's files are out of reach, and
// the sessions folder can be passed but not listed. Sessions live under `sessions.root`
// here (outside the state directory), where a job ran.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe(
  'state directory modes against a local account',
  { skip: skipUnlessRoot('checking the state directory against a local account') },
  () => {
    let ceres: RunningCeres;
    let client: Client;
    let acct: TestAccount;
    let work: string;
    let sessionRoot: string;
    before(async () => {
      assertRoot();
      acct = createAccount();
      work = tempDir('modes');
      chmodSync(work, 0o711);
      sessionRoot = join(work, 'shared', 'sessions');
      ceres = await startCeres({ stateDir: join(work, 'state'), config: { sessions: { root: sessionRoot } } });
      client = Client.forUser(ceres);
      const [item] = await client.submit('&(executable="/bin/echo")(arguments="hello")(stdout="o")');
      await client.waitFor([item.id], ['FINISHED']);
    });
    after(async () => {
      await client?.close();
      if (ceres) await stopCeres(ceres);
      removeAccounts();
      if (work) removeDir(work);
    });

    /** Run `cmd` as the account; its stderr. */
    const asAccount = (cmd: string): string =>
      spawnSync('runuser', ['-u', acct.name, '--', 'sh', '-c', cmd], { encoding: 'utf8' }).stderr;

    it('sets the modes: the state directory and the sessions folder passable, the rest private', () => {
      const mode = (p: string): number => statSync(p).mode & 0o777;
      const s = ceres.stateDir;
      assert.equal(mode(s), 0o711);
      assert.equal(mode(sessionRoot), 0o711);
      for (const d of ['control', 'delegations', 'cache', 'pki']) assert.equal(mode(join(s, d)), 0o700, d);
      assert.equal(mode(join(s, 'lrms')), 0o711, 'lrms: passable, each attempt directory private');
      for (const d of ['lrms/jobs', 'lrms/fork']) assert.equal(mode(join(s, d)), 0o700, d);
      for (const f of readdirSync(s).filter((n) => n.startsWith('ceres.db'))) assert.equal(mode(join(s, f)), 0o600, f);
    });

    it('puts the session directories under sessions.root, and the credential copies beside them', () => {
      assert.equal(readdirSync(sessionRoot).filter((n) => !n.startsWith('.')).length, 1);
      assert.equal(statSync(join(sessionRoot, '.ceres-credentials')).mode & 0o777, 0o711);
      assert.deepEqual(
        readdirSync(join(ceres.stateDir)).filter((n) => n === 'sessions'),
        [],
      );
    });

    it('a local account gets "Permission denied" for the host key, the database, delegations, control, lrms and listing the sessions', () => {
      const s = ceres.stateDir;
      const attempts = [
        `cat ${join(s, 'pki', 'hostkey.pem')}`,
        `cat ${join(s, 'ceres.db')}`,
        `ls ${join(s, 'delegations')}`,
        `ls ${join(s, 'control')}`,
        `ls ${join(s, 'lrms')}`,
        `ls ${join(s, 'lrms', 'jobs')}`,
        `ls ${s}`,
        `ls ${sessionRoot}`,
      ];
      for (const cmd of attempts) assert.match(asAccount(cmd), /Permission denied/, cmd);
    });
  },
);
