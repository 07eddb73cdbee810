// The service on a real Grid Engine with mapped accounts (root, real local accounts, the
// dev PKI's users mapped by a grid-mapfile): each user's job is submitted to Grid Engine as
// its account (Grid Engine's owner) and runs as it, its output the account's, and it cannot
// read the other account's session files; kill deletes the Grid Engine job and stops its
// processes; an account that does not exist fails the job with the reason and nothing
// reaches Grid Engine. The real ARC client on Grid Engine: test/interop/arc-client-gridengine.test.ts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import {
  Client,
  processAlive,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
  type RunningCeres,
} from '../helpers/service.js';
import { assertRoot, createAccount, removeAccounts, type TestAccount } from '../helpers/local-accounts.js';
import { untilValue } from '../helpers/poll.js';
import { until } from './backend.case.js';
import { gridEngineSkip, useGridEngine } from './gridengine-fixture.js';

const skip = gridEngineSkip();

describe('Ceres on a real Grid Engine, jobs under mapped accounts', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const ge = useGridEngine();
  let work = '';
  let ceres: RunningCeres | undefined;
  let a: TestAccount;
  let b: TestAccount;
  const users: Record<'alice' | 'bob' | 'carol', Client | undefined> = {
    alice: undefined,
    bob: undefined,
    carol: undefined,
  };
  const user = (n: keyof typeof users): Client => users[n] as Client;

  before(async () => {
    assertRoot();
    a = createAccount();
    b = createAccount();
    work = tempDir('ge-svc');
    const pki = await initDevPki(join(work, 'pki'));
    const dn: Record<string, string> = {};
    for (const u of Object.keys(users)) dn[u] = (await addDevUser(pki.dir, u)).dn;
    const gridMap = join(work, 'grid-mapfile');
    writeFileSync(gridMap, `"${dn.alice}" ${a.name}\n"${dn.bob}" ${b.name}\n"${dn.carol}" nosuchacct-ge\n`);
    ceres = await startCeres({
      stateDir: work,
      config: {
        authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gridMap }] }], allow: ['local'] },
        mapping: [{ group: 'local', gridMapFile: gridMap }],
        cluster: { queues: [{ name: 'all.q' }, { name: 'long' }] },
        lrms: {
          backend: 'gridengine',
          gridengine: {
            ...ge.settings(),
            pollIntervalMs: 300,
            killGraceSeconds: 2,
            statusGraceMs: 3000,
          },
        },
      },
    });
    for (const u of Object.keys(users) as (keyof typeof users)[])
      users[u] = new Client(ceres.url, join(ceres.pkiDir, `${u}-proxy.pem`), join(ceres.pkiDir, 'ca.pem'));
  });
  after(async () => {
    // A job a failed test left waiting for its go ends: its shepherd would outlive the cell.
    for (const d of work && existsSync(join(work, 'sessions')) ? readdirSync(join(work, 'sessions')) : [])
      writeFileSync(join(work, 'sessions', d, 'go'), '', { flag: 'a' });
    for (const c of Object.values(users)) await c?.close();
    if (ceres) await stopCeres(ceres);
    removeAccounts();
    if (work) removeDir(work);
  });

  /** Grid Engine's jobs of a Ceres job (its name starts with the prefix and the id), with their owners. */
  const geJobs = (id: string): { number: string; owner: string }[] =>
    [
      ...ge
        .cmd('qstat', ['-u', '*', '-xml'])
        .matchAll(/<JB_job_number>(\d+)<\/JB_job_number>[\s\S]*?<JB_name>([^<]*)<\/JB_name>\s*<JB_owner>([^<]*)</g),
    ]
      .filter((m) => (m[2] as string).startsWith(`ceres-${id}`))
      .map((m) => ({ number: m[1] as string, owner: m[3] as string }));
  const session = (id: string, f: string): string => join(work, 'sessions', id, f);
  const sh = (script: string, outputs: string[] = []): string =>
    `&(executable="/bin/sh")(arguments="-c" "${script.replaceAll('"', '""')}")(stdout="out")(stderr="err")(queue="all.q")` +
    `(outputfiles=${['out', 'err', ...outputs].map((f) => `("${f}" "")`).join('')})`;
  const wait = 'while [ ! -e go ]; do sleep 0.1; done';

  it("each user's job is the account's in Grid Engine, runs as it, and cannot read the other's session", async () => {
    const [bj] = await user('bob').submit(sh(`id -un; echo secret > secret.txt; ${wait}`, ['secret.txt']));
    const [aj] = await user('alice').submit(
      sh(`id -un; ${wait}; cat ${session(bj.id as string, 'secret.txt')} || echo refused`),
    );
    const ids = [aj.id as string, bj.id as string];
    await user('alice').waitFor([ids[0] as string], ['RUNNING'], 60_000);
    await user('bob').waitFor([ids[1] as string], ['RUNNING'], 60_000);
    assert.deepEqual(
      ids.map((id) => geJobs(id).map((j) => j.owner)),
      [[a.name], [b.name]],
      'qsub ran as each account',
    );
    await until("bob's secret", () => existsSync(session(ids[1] as string, 'secret.txt')));
    for (const id of ids) writeFileSync(session(id, 'go'), '');
    assert.deepEqual(
      [...(await user('alice').waitFor([ids[0] as string], ['FINISHED', 'FAILED'])).values()],
      ['FINISHED'],
    );
    assert.deepEqual(
      [...(await user('bob').waitFor([ids[1] as string], ['FINISHED', 'FAILED'])).values()],
      ['FINISHED'],
    );
    assert.equal(readFileSync(session(ids[0] as string, 'out'), 'utf8'), `${a.name}\nrefused\n`);
    assert.match(readFileSync(session(ids[0] as string, 'err'), 'utf8'), /Permission denied/);
    assert.equal(readFileSync(session(ids[1] as string, 'out'), 'utf8'), `${b.name}\n`);
    assert.equal(statSync(session(ids[1] as string, 'secret.txt')).uid, b.uid, "the job's files are the account's");
  });

  it('kill deletes the Grid Engine job and stops its processes, which ran as the account', async () => {
    const [kj] = await user('alice').submit(sh('echo $$ > main.pid; while :; do sleep 0.05; done'));
    const id = kj.id as string;
    const pid = await untilValue('the main process', async () => {
      const t = existsSync(session(id, 'main.pid')) ? readFileSync(session(id, 'main.pid'), 'utf8') : '';
      return /^\d+\n$/.test(t) ? Number(t) : undefined;
    });
    assert.equal(statSync(`/proc/${pid}`).uid, a.uid, 'the job runs as the account');
    const [k] = await user('alice').action('kill', [id]);
    assert.equal(k['status-code'], '202', JSON.stringify(k));
    assert.deepEqual([...(await user('alice').waitFor([id], ['KILLED', 'FINISHED', 'FAILED'])).values()], ['KILLED']);
    assert.deepEqual(geJobs(id), [], 'Grid Engine no longer has it');
    await until('the job process to end', () => !processAlive(pid), 15_000);
  });

  it('a held job says why in its info document (the state letters of the one qstat poll); released, it runs and says no more', async () => {
    const HELD = "Waiting: in the batch system: HELD, the batch system's reason: held";
    const messages = async (id: string): Promise<string[]> => {
      const [i] = await user('alice').action('info', [id]);
      const m = (i.info_document as { ComputingActivity: { OtherMessages?: string | string[] } }).ComputingActivity
        .OtherMessages;
      return m === undefined ? [] : Array.isArray(m) ? m : [m];
    };
    // The queue disabled first: the job cannot start before it is held.
    ge.cmd('qmod', ['-d', 'all.q']);
    try {
      const [j] = await user('alice').submit(sh('echo ran'));
      const id = j.id as string;
      const number = await untilValue('the job in Grid Engine', async () => geJobs(id)[0]?.number);
      await untilValue('waiting, no reason of Grid Engine', async () =>
        (await messages(id)).includes('Waiting: in the batch system: QUEUING') ? true : undefined,
      );
      ge.cmd('qhold', [number]);
      await untilValue('the hold in the info document', async () =>
        (await messages(id)).includes(HELD) ? true : undefined,
      );
      ge.cmd('qrls', [number]);
      ge.cmd('qmod', ['-e', 'all.q']);
      assert.deepEqual([...(await user('alice').waitFor([id], ['FINISHED', 'FAILED'])).values()], ['FINISHED']);
      assert.deepEqual(
        (await messages(id)).filter((m) => m.startsWith('Waiting: ')),
        [],
      );
    } finally {
      ge.cmd('qmod', ['-e', 'all.q']);
    }
  });

  it('an account that does not exist: the job fails with the reason, nothing reaches Grid Engine', async () => {
    const [cj] = await user('carol').submit(sh('echo ran'));
    const id = cj.id as string;
    assert.deepEqual([...(await user('carol').waitFor([id], ['FINISHED', 'FAILED'])).values()], ['FAILED']);
    const [item] = await user('carol').action('info', [id]);
    assert.match(JSON.stringify(item.info_document.ComputingActivity), /nosuchacct-ge does not exist/);
    assert.deepEqual(geJobs(id), []);
  });
});
