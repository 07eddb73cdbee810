// A kill -9 while a mapped job's session directory is made (src/sessions/session-dirs.ts):
// the real service, as root with a mapping to a real account, is killed by strace at its
// first fchown, the system call that gives the just-made directory (held open since its
// mkdir) to the account. What
// that leaves (an empty directory of the service's at the job's name, no identity stored)
// is adopted at the restart: the acknowledged job runs once, as its account, and
// finishes. What another account could have put there instead (an empty directory of a
// third account, a directory with content) is refused: those jobs fail with the reason,
// never run, and the directory is left as it was found.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  rootRequired,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

function hasStrace(): boolean {
  try {
    execFileSync('strace', ['-V'], { stdio: 'pipe' });
    return true;
  } catch {
    return false;
  }
}

/** strace kills the service (every thread and child it traces) on entering its first fchown. */
const KILL_AT_FIRST_FCHOWN = [
  'strace',
  '-f',
  '--seccomp-bpf',
  '-qq',
  '-o',
  '/dev/null',
  '-e',
  'trace=fchown',
  '-e',
  'inject=fchown:signal=KILL:when=1',
];

const skip = skipUnlessRoot('a root service with a mapping') || (!hasStrace() && !rootRequired() && 'needs strace');

describe("kill -9 while a mapped job's session directory is made", { skip, timeout: 300_000 }, () => {
  let dir: string;
  let stateDir: string;
  let ledger: string;
  let a: TestAccount;
  let other: TestAccount;
  let ceres: RunningCeres | undefined;
  let alice: Client | undefined;
  /** The job killed in the window, and the two whose leftover was replaced while the service was down. */
  let crashed: string;
  let foreign: string;
  let filled: string;
  const sessionOf = (id: string): string => join(stateDir, 'sessions', id);

  before(async () => {
    assertRoot();
    if (!hasStrace())
      throw new Error('strace is needed to stop the service at its fchown (Debian: apt-get install strace)');
    a = createAccount();
    other = createAccount();
    dir = tempDir('crashwin');
    chmodSync(dir, 0o755);
    stateDir = join(dir, 'state');
    ledger = join(dir, 'ran.log');
    const script = join(dir, 'job.sh');
    writeFileSync(ledger, '');
    chmodSync(ledger, 0o666);
    writeFileSync(script, `#!/bin/sh\necho "$RUNTIME_JOB_ID $(id -un)" >> ${ledger}\necho done\n`);
    chmodSync(script, 0o755);
    const pki = await initDevPki(join(stateDir, 'pki'));
    const dn = (await addDevUser(pki.dir, 'alice')).dn;
    const gridMap = join(dir, 'grid-mapfile');
    writeFileSync(gridMap, `"${dn}" ${a.name}\n`);
    const config = {
      authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gridMap }] }], allow: ['local'] },
      mapping: [{ group: 'local', gridMapFile: gridMap }],
    };
    const start = async (wrap?: readonly string[]): Promise<Client> => {
      ceres = await startCeres({ stateDir, config, ...(wrap ? { wrap } : {}) });
      return new Client(ceres.url, join(ceres.pkiDir, 'alice-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    };

    // 1. Submitted and acknowledged; the service dies at the first fchown of a session directory.
    alice = await start(KILL_AT_FIRST_FCHOWN);
    const killed = ceres as RunningCeres;
    const jobs = await alice.submit(`+${`(&(executable="${script}")(stdout="out"))`.repeat(3)}`);
    const ids = jobs.map((j: { id: string }) => j.id);
    assert.equal(ids.length, 3, JSON.stringify(jobs));
    await until(() => killed.child.exitCode !== null || killed.child.signalCode !== null, 'the kill at fchown', 60_000);
    await alice.close();
    alice = undefined;

    // The window hit: an empty directory of the service's at a job's name (the first
    // fchown never ran, so no job's directory was given away or recorded).
    const inWindow = ids.filter((id) => {
      try {
        const s = lstatSync(sessionOf(id));
        return s.isDirectory() && s.uid === 0 && readdirSync(sessionOf(id)).length === 0;
      } catch {
        return false;
      }
    });
    assert.ok(inWindow.length >= 1, `no job's directory was left in the window:\n${killed.output()}`);
    crashed = inWindow[0] as string;
    [foreign, filled] = ids.filter((id) => id !== crashed) as [string, string];
    // 2. While it is down: what another account could leave in the two others' places.
    for (const id of [foreign, filled]) {
      rmSync(sessionOf(id), { recursive: true, force: true });
      mkdirSync(sessionOf(id), { mode: 0o700 });
    }
    chownSync(sessionOf(foreign), other.uid, other.gid);
    writeFileSync(join(sessionOf(filled), 'planted'), 'x');
    chownSync(sessionOf(filled), a.uid, a.gid);

    // 3. The restart, without the fault.
    alice = await start();
    const st = await alice.waitFor(ids, FINAL, 120_000);
    assert.ok(
      ids.every((id) => FINAL.includes(st.get(id) ?? '')),
      `not ended: ${JSON.stringify([...st])}`,
    );
  });

  after(async () => {
    await alice?.close();
    if (ceres) await stopCeres(ceres);
    removeAccounts();
    if (dir) removeDir(dir);
  });

  const state = async (id: string): Promise<string | undefined> => (await alice?.status([id]))?.get(id);
  const reason = async (id: string): Promise<string> =>
    (await alice?.req('GET', `/rest/1.1/jobs/${id}/diagnose/failed`, undefined, { accept: '*/*' }))?.text ?? '';
  const runs = (id: string): string[] =>
    readFileSync(ledger, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith(`${id} `));

  it('the job killed in the window is adopted at the restart: it runs once, as its account, and finishes', async () => {
    assert.equal(await state(crashed), 'FINISHED', await reason(crashed));
    assert.deepEqual(runs(crashed), [`${crashed} ${a.name}`]);
    const s = lstatSync(sessionOf(crashed));
    assert.deepEqual([s.uid, s.gid, s.mode & 0o777], [a.uid, a.gid, 0o700], "the adopted directory is the account's");
  });

  it("an empty directory of another account in a job's place is refused: the job fails with the reason and never runs", async () => {
    assert.equal(await state(foreign), 'FAILED');
    assert.match(await reason(foreign), /another account's directory/);
    assert.deepEqual(runs(foreign), []);
    assert.equal(lstatSync(sessionOf(foreign)).uid, other.uid, 'left as it was');
  });

  it("a directory with content in a job's place is refused, even the account's: the job fails and never runs", async () => {
    assert.equal(await state(filled), 'FAILED');
    assert.match(await reason(filled), /not empty/);
    assert.deepEqual(runs(filled), []);
    assert.deepEqual(readdirSync(sessionOf(filled)), ['planted'], 'left as it was');
  });
});
