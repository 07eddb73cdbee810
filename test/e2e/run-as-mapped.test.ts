// Jobs under mapped local accounts through the real service (root, real accounts, the dev
// PKI's users mapped by a grid-mapfile): each user's job runs as its account; it cannot
// read the other account's session files, the host key, the database, the delegations or
// the control files (Permission denied); a file uploaded with PUT and the copy of its
// delegated token are the account's; an account that does not exist fails the job with
// the reason, and nothing runs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { fakeJwt } from '../delegations/fixture.js';
import { untilValue as until } from '../helpers/poll.js';
import {
  Client,
  processAlive,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
  type RunningCeres,
} from '../helpers/service.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe(
  'jobs under mapped local accounts (real service)',
  { skip: skipUnlessRoot('running mapped jobs as local accounts') },
  () => {
    let stateDir: string;
    let ceres: RunningCeres;
    let a: TestAccount;
    let b: TestAccount;
    let alice: Client;
    let bob: Client;
    let carol: Client;
    const marker = join('/tmp', `ceres-ran-${process.pid}-${Date.now()}`);

    before(async () => {
      assertRoot();
      a = createAccount();
      b = createAccount();
      stateDir = tempDir('runas');
      const pki = await initDevPki(join(stateDir, 'pki'));
      const dn: Record<string, string> = {};
      for (const u of ['alice', 'bob', 'carol']) dn[u] = (await addDevUser(pki.dir, u)).dn;
      const gridMap = join(stateDir, 'grid-mapfile');
      writeFileSync(gridMap, `"${dn.alice}" ${a.name}\n"${dn.bob}" ${b.name}\n"${dn.carol}" nosuchacct-ceres\n`);
      ceres = await startCeres({
        stateDir,
        config: {
          authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gridMap }] }], allow: ['local'] },
          mapping: [{ group: 'local', gridMapFile: gridMap }],
        },
      });
      const user = (n: string): Client =>
        new Client(ceres.url, join(ceres.pkiDir, `${n}-proxy.pem`), join(ceres.pkiDir, 'ca.pem'));
      alice = user('alice');
      bob = user('bob');
      carol = user('carol');
    });
    after(async () => {
      for (const c of [alice, bob, carol]) await c?.close();
      if (ceres) await stopCeres(ceres);
      removeAccounts();
      if (stateDir) removeDir(stateDir);
    });

    const file = async (c: Client, job: string, name: string): Promise<string> => {
      const r = await c.req('GET', `/rest/1.1/jobs/${job}/session/${name}`, undefined, { accept: '*/*' });
      return r.status === 200 ? r.text : `HTTP ${r.status}`;
    };
    const sh = (script: string, o: { outputs?: string[]; extra?: string } = {}): string =>
      `&(executable="/bin/sh")(arguments="-c" "${script.replaceAll('"', '""')}")(stdout="out")(stderr="err")(outputfiles=${['out', 'err', ...(o.outputs ?? [])].map((f) => `("${f}" "")`).join('')})${o.extra ?? ''}`;

    it("each user's job runs as its account and reaches nothing of the service or of the other user", async () => {
      const [bj] = await bob.submit(sh('id -un; echo secret > secret.txt', { outputs: ['secret.txt'] }));
      assert.deepEqual([...(await bob.waitFor([bj.id], ['FINISHED', 'FAILED'])).values()], ['FINISHED']);
      assert.equal(await file(bob, bj.id, 'out'), `${b.name}\n`);
      const s = ceres.stateDir;
      const attempts = [
        `cat ${join(s, 'sessions', bj.id, 'secret.txt')}`,
        `cat ${join(s, 'pki', 'hostkey.pem')}`,
        `cat ${join(s, 'ceres.db')}`,
        `ls ${join(s, 'delegations')}`,
        `ls ${join(s, 'control')}`,
        `ls ${join(s, 'sessions')}`,
      ];
      const token = fakeJwt({ sub: 'alice' });
      const d = await alice.req('POST', '/rest/1.1/delegations?action=new&type=jwt', undefined, {
        'x-delegation': `bearer ${token}`,
      });
      assert.equal(d.status, 201, d.text);
      const delegation = String(d.headers.location).split('/').pop() as string;
      const [aj] = await alice.submit(
        sh(
          [
            'id -un',
            'cat in.txt',
            ...attempts.map((c) => `${c} > /dev/null`),
            'cat "$BEARER_TOKEN_FILE" > tok',
            'stat -c "%U %a" "$BEARER_TOKEN_FILE" >> tok',
            'exit 0',
          ].join('; '),
          {
            outputs: ['tok'],
            extra: `(inputfiles=("in.txt" ""))(delegationid="${delegation}")`,
          },
        ),
      );
      const put = await alice.req('PUT', `/rest/1.1/jobs/${aj.id}/session/in.txt`, 'uploaded\n', {
        'content-type': 'application/octet-stream',
      });
      assert.equal(put.status, 200, put.text);
      const up = statSync(join(s, 'sessions', aj.id, 'in.txt'));
      assert.deepEqual([up.uid, up.gid], [a.uid, a.gid], "the uploaded file is the account's");
      const sess = statSync(join(s, 'sessions', aj.id));
      assert.deepEqual([sess.uid, sess.mode & 0o777], [a.uid, 0o700], "the session directory is the account's, 0700");
      assert.deepEqual([...(await alice.waitFor([aj.id], ['FINISHED', 'FAILED'])).values()], ['FINISHED']);
      assert.equal(await file(alice, aj.id, 'out'), `${a.name}\nuploaded\n`);
      const err = await file(alice, aj.id, 'err');
      const denied = err.split('\n').filter((l) => /Permission denied/.test(l));
      assert.equal(denied.length, attempts.length, `every attempt is refused:\n${err}`);
      assert.equal(
        await file(alice, aj.id, 'tok'),
        `${token}${a.name} 600\n`,
        "the job reads its credential copy, the account's, 0600",
      );
    });

    it('kill stops every process of the job, a daemon of the account in its own session included', async () => {
      const [kj] = await alice.submit(
        sh("setsid sh -c 'echo $$ > d.pid; exec sleep 1000' & echo $$ > main.pid; while :; do sleep 0.05; done"),
      );
      const pid = async (f: string): Promise<number | undefined> => {
        const t = await file(alice, kj.id, f);
        return /^\d+\n$/.test(t) ? Number(t) : undefined;
      };
      const pids = [
        await until('the daemon', () => pid('d.pid')),
        await until('the main process', () => pid('main.pid')),
      ];
      for (const p of pids) assert.equal(statSync(`/proc/${p}`).uid, a.uid, 'the processes run as the account');
      const [k] = await alice.action('kill', [kj.id]);
      assert.equal(k['status-code'], '202', JSON.stringify(k));
      await alice.waitFor([kj.id], ['KILLED', 'FINISHED', 'FAILED']);
      await until(
        'no process of the job is left',
        async () => (pids.every((p) => !processAlive(p)) ? true : undefined),
        15_000,
      );
    });

    it('an account that does not exist: the job fails with the reason, and nothing runs', async () => {
      const [cj] = await carol.submit(`&(executable="/bin/touch")(arguments="${marker}")`);
      assert.deepEqual([...(await carol.waitFor([cj.id], ['FINISHED', 'FAILED'])).values()], ['FAILED']);
      const [item] = await carol.action('info', [cj.id]);
      const errors = JSON.stringify(item.info_document.ComputingActivity);
      assert.match(errors, /nosuchacct-ceres does not exist/);
      assert.equal(existsSync(marker), false, 'the job did not run, as root or anyone');
    });
  },
);
