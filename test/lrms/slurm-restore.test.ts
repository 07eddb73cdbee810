// The documented backup → stop → restore → start on a real Slurm with a mapped account
// (real accounts, root): a job running under the account when the backup is made keeps
// running while the service is down and its state directory is replaced by the restored
// one; the restored service follows it again, like after a crash, and it finishes with
// its output. Before, the restore gave the job's lrms folder to root: the job's wrapper
// could not write its status there and the job ended FAILED, "job lost".
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, cpSync, lstatSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { assertRoot, createAccount, removeAccounts, type TestAccount } from '../helpers/local-accounts.js';
import { ceresCli } from '../admin/cli.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip();

describe(
  'backup, stop, restore, start with a Slurm job running under a mapped account',
  {
    ...(skip !== undefined ? { skip } : {}),
  },
  () => {
    if (skip !== undefined) return;
    const slurm = useSlurm();
    let work = '';
    let state = '';
    let account: TestAccount;
    let ceres: RunningCeres | undefined;
    let config: Record<string, unknown>;

    before(async () => {
      assertRoot();
      account = createAccount();
      work = tempDir('slurm-restore');
      chmodSync(work, 0o755);
      state = join(work, 'state');
      // The sessions on their own file system path (a Slurm site's shared one), as the
      // running job writes into its session directory while the state directory is replaced.
      const sessions = join(work, 'sessions');
      mkdirSync(sessions, { mode: 0o711 });
      const pki = await initDevPki(join(state, 'pki'));
      const alice = (await addDevUser(pki.dir, 'alice')).dn;
      const gridMap = join(work, 'grid-mapfile');
      writeFileSync(gridMap, `"${alice}" ${account.name}\n`);
      config = {
        cluster: { queues: [{ name: 'debug' }] },
        sessions: { root: sessions },
        authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gridMap }] }], allow: ['local'] },
        mapping: [{ group: 'local', gridMapFile: gridMap }],
        lrms: {
          backend: 'slurm',
          slurm: { slurmConf: slurm.conf, pollIntervalMs: 300, infoRefreshMs: 300, killGraceSeconds: 2 },
        },
      };
    });
    after(async () => {
      if (ceres) await stopCeres(ceres);
      removeAccounts();
      if (work) removeDir(work);
    });

    const start = async (): Promise<Client> => {
      ceres = await startCeres({ stateDir: state, config });
      return new Client(ceres.url, join(ceres.pkiDir, 'alice-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    };

    it('the job running at backup time survives the restore like a crash and finishes with its output', async () => {
      let c = await start();
      const go = join(work, 'go');
      const [job] = await c.submit(
        `&(executable="/bin/sh")(arguments="-c" "while [ ! -e ${go} ]; do sleep 0.1; done; id -un; echo after the restore")(stdout="out.txt")(outputfiles=("out.txt" ""))`,
      );
      const id = job.id as string;
      await c.waitFor([id], ['RUNNING'], 60_000);
      const file = join(work, 'backup.tar.gz');
      const b = await ceresCli(['admin', '--state-dir', state, 'backup', file]);
      assert.equal(b.code, 0, b.stderr);
      await c.close();
      await stopCeres(ceres as RunningCeres);
      ceres = undefined;
      renameSync(state, `${state}.old`);
      const restoreConfig = join(work, 'restore-config.json');
      writeFileSync(restoreConfig, JSON.stringify({ ...config, stateDir: state }));
      const r = await ceresCli(['admin', '--config', restoreConfig, 'restore', file]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /owners and modes kept/);
      assert.doesNotMatch(r.stdout, /held/);
      const jobDir = join(state, 'lrms', 'jobs', id.slice(0, 2), id);
      const attempt = join(jobDir, readdirSync(jobDir)[0] as string);
      assert.equal(lstatSync(attempt).uid, account.uid, "the job's lrms folder is its account's again");
      writeFileSync(go, '');
      c = await start();
      const st = await c.waitFor([id], ['FINISHED', 'FAILED', 'KILLED'], 120_000);
      const errors = await c.req('GET', `/rest/1.1/jobs/${id}/diagnose/errors`, undefined, { accept: 'text/plain' });
      assert.equal(st.get(id), 'FINISHED', errors.text);
      const out = await c.req('GET', `/rest/1.1/jobs/${id}/session/out.txt`, undefined, { accept: '*/*' });
      assert.equal(out.text, `${account.name}\nafter the restore\n`);
      await c.close();
    });

    it('with the sessions in the state directory: a job whose session folder is moved back before the start finishes, one whose folder is not fails, saying so', async () => {
      // docs/operations.md, "Back up and restore": a backup without --with-sessions holds no
      // session; a job running through it writes into its folder under the old state
      // directory, which the restored service finds once it is moved back.
      const own = { ...config, sessions: {} };
      const dir = join(work, 'own-state');
      // The same development PKI, so that alice is the grid-mapfile's alice.
      cpSync(join(state, 'pki'), join(dir, 'pki'), { recursive: true });
      if (ceres) await stopCeres(ceres);
      let svc = await startCeres({ stateDir: dir, config: own });
      ceres = svc;
      let c = new Client(svc.url, join(svc.pkiDir, 'alice-proxy.pem'), join(svc.pkiDir, 'ca.pem'));
      const go = join(work, 'go2');
      const desc = `&(executable="/bin/sh")(arguments="-c" "while [ ! -e ${go} ]; do sleep 0.1; done; echo kept")(stdout="out.txt")`;
      const [moved] = await c.submit(desc);
      const [left] = await c.submit(desc);
      const ids = [moved.id as string, left.id as string];
      await c.waitFor(ids, ['RUNNING'], 60_000);
      const file = join(work, 'backup2.tar.gz');
      assert.equal((await ceresCli(['admin', '--state-dir', dir, 'backup', file])).code, 0);
      await c.close();
      await stopCeres(svc);
      ceres = undefined;
      renameSync(dir, `${dir}.old`);
      const restoreConfig = join(work, 'restore-config2.json');
      writeFileSync(restoreConfig, JSON.stringify({ ...own, stateDir: dir }));
      const r = await ceresCli(['admin', '--config', restoreConfig, 'restore', file]);
      assert.equal(r.code, 0, r.stderr);
      mkdirSync(join(dir, 'sessions'), { mode: 0o711 });
      renameSync(join(`${dir}.old`, 'sessions', ids[0] as string), join(dir, 'sessions', ids[0] as string));
      writeFileSync(go, '');
      svc = await startCeres({ stateDir: dir, config: own });
      ceres = svc;
      c = new Client(svc.url, join(svc.pkiDir, 'alice-proxy.pem'), join(svc.pkiDir, 'ca.pem'));
      const st = await c.waitFor(ids, ['FINISHED', 'FAILED', 'KILLED'], 120_000);
      assert.equal(st.get(ids[0] as string), 'FINISHED');
      assert.equal((await c.req('GET', `/rest/1.1/jobs/${ids[0]}/session/out.txt`)).text, 'kept\n');
      assert.equal(st.get(ids[1] as string), 'FAILED');
      const why = await c.req('GET', `/rest/1.1/jobs/${ids[1]}/diagnose/errors`, undefined, { accept: 'text/plain' });
      assert.match(why.text, /session directory of job \w+ is missing/);
      await c.close();
    });
  },
);
