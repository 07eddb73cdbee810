// A job may rename its session directory and put a link (to another user's session,
// to the state directory) or another directory in its place. Against the real
// service over TLS, with real fork jobs: the REST API, stage-out and clean/wipe must
// never read, write or delete anything in the target, and clean removes the link and
// the job's renamed directory.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const exists = (p: string): boolean => {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
};

describe('a job that replaces its session directory', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let sessions: string;
  /** Bob's finished job, the target of alice's links. */
  let victim: string;
  const victimDir = (): string => join(sessions, victim);
  const s = (id: string, p = ''): string => `/rest/1.1/jobs/${id}/session${p === '' ? '' : `/${p}`}`;

  /** What the job does: renames its directory to `<id>.moved` and puts `what` in its place. */
  const replace = async (id: string, what: { link: string } | 'dir'): Promise<void> => {
    await rename(join(sessions, id), join(sessions, `${id}.moved`));
    if (what === 'dir') {
      await mkdir(join(sessions, id));
      await writeFile(join(sessions, id, 'o'), 'decoy\n');
    } else {
      await symlink(what.link, join(sessions, id));
    }
  };

  const finished = async (c: Client, desc: string, states = ['FINISHED']): Promise<string> => {
    const [item] = await c.submit(desc);
    const id = item.id as string;
    const st = await c.waitFor([id], states);
    assert.ok(states.includes(st.get(id) ?? ''), `job ${id}: ${st.get(id)}`);
    return id;
  };

  const stateIntact = (): void => {
    assert.ok(existsSync(join(ceres.stateDir, 'ceres.db')), 'ceres.db is still there');
    assert.ok(existsSync(join(ceres.stateDir, 'pki', 'ca.pem')), 'the PKI is still there');
    assert.ok(existsSync(join(ceres.stateDir, 'test-config.json')));
  };
  const victimIntact = (): void => {
    assert.deepEqual(readdirSync(victimDir()).sort(), ['keep.txt', 'o']);
    assert.equal(readFileSync(join(victimDir(), 'o'), 'utf8'), 'secret\n');
  };

  before(async () => {
    ceres = await startCeres();
    sessions = join(ceres.stateDir, 'sessions');
    await addDevUser(ceres.pkiDir, 'bob');
    alice = Client.forUser(ceres);
    bob = new Client(ceres.url, join(ceres.pkiDir, 'bob-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    victim = await finished(
      bob,
      '&(executable="/bin/sh")(arguments="-c" "echo keep > keep.txt; echo secret")(stdout="o")(outputfiles=("keep.txt" ""))',
    );
    victimIntact();
  });
  after(async () => {
    await alice.close();
    await bob.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it("REST GET/PUT/DELETE/PROPFIND through a link to another user's session answer 409 and touch nothing", async () => {
    const id = await finished(alice, '&(executable="/bin/echo")(arguments="mine")(stdout="o")');
    await replace(id, { link: victimDir() });
    for (const [m, p, body] of [
      ['GET', s(id, 'o'), undefined],
      ['GET', s(id), undefined],
      ['PROPFIND', s(id), undefined],
      ['PUT', s(id, 'evil'), 'x'],
      ['PUT', s(id, 'o'), 'overwritten'],
      ['DELETE', s(id, 'o'), undefined],
      ['DELETE', s(id, 'keep.txt'), undefined],
    ] as const) {
      const r = await alice.req(m, p, body, m === 'PROPFIND' ? { depth: '1' } : {});
      assert.equal(r.status, 409, `${m} ${p}: ${r.status} ${r.text}`);
      assert.match(r.text, /replaced/, `${m} ${p}`);
      assert.doesNotMatch(r.text, /secret/);
    }
    victimIntact();
  });

  it('REST requests through a link to the state directory answer 409 and touch nothing', async () => {
    const id = await finished(alice, '&(executable="/bin/true")');
    await replace(id, { link: ceres.stateDir });
    for (const [m, p, body] of [
      ['GET', s(id, 'ceres.db'), undefined],
      ['GET', s(id, 'pki/ca.pem'), undefined],
      ['PROPFIND', s(id, 'pki'), undefined],
      ['PUT', s(id, 'ceres.db'), 'garbage'],
      ['DELETE', s(id, 'ceres.db'), undefined],
      ['DELETE', s(id, 'pki/'), undefined],
    ] as const) {
      const r = await alice.req(m, p, body, m === 'PROPFIND' ? { depth: '1' } : {});
      assert.equal(r.status, 409, `${m} ${p}: ${r.status} ${r.text}`);
    }
    stateIntact();
    assert.notEqual(readFileSync(join(ceres.stateDir, 'ceres.db')).subarray(0, 7).toString(), 'garbage');
    // Clean removes the link and the renamed directory, nothing behind the link.
    await alice.action('clean', [id]);
    await alice.waitFor([id], ['HTTP404']);
    assert.ok(!exists(join(sessions, id)), 'the link is gone');
    assert.ok(!exists(join(sessions, `${id}.moved`)), 'the renamed session directory is gone');
    stateIntact();
  });

  it("clean of a job linked to another user's session removes the link and its leftovers only", async () => {
    const id = await finished(alice, '&(executable="/bin/echo")(arguments="mine")(stdout="o")');
    await replace(id, { link: victimDir() });
    await alice.action('clean', [id]);
    assert.equal((await alice.waitFor([id], ['HTTP404'])).get(id), 'HTTP404');
    assert.ok(!exists(join(sessions, id)));
    assert.ok(!exists(join(sessions, `${id}.moved`)));
    victimIntact();
  });

  it('another real directory in its place: 409 (never its content), and clean leaves that directory alone', async () => {
    const id = await finished(alice, '&(executable="/bin/echo")(arguments="mine")(stdout="o")');
    await replace(id, 'dir');
    const r = await alice.req('GET', s(id, 'o'));
    assert.equal(r.status, 409, r.text);
    assert.doesNotMatch(r.text, /decoy|mine/);
    assert.equal((await alice.req('PUT', s(id, 'x'), 'x')).status, 409);
    assert.ok(!exists(join(sessions, id, 'x')));
    await alice.action('clean', [id]);
    await alice.waitFor([id], ['HTTP404']);
    assert.ok(!exists(join(sessions, `${id}.moved`)), "the job's own directory is removed where it was moved");
    // Whose the replacement is cannot be known (it may be another job's, moved): kept.
    assert.equal(readFileSync(join(sessions, id, 'o'), 'utf8'), 'decoy\n');
  });

  /**
   * A job that, while it runs, has its session directory renamed and `link` put in its
   * place, then ends: its stage-out meets the link. A job running as the service's own
   * user can do this itself; under root the job runs as an unprivileged account that
   * cannot rename in the sessions folder, so the test process does it for the job.
   */
  const swappedWhileRunning = async (link: string, extra = ''): Promise<string> => {
    const go = join(tmpdir(), `ceres-go-${process.pid}-${Date.now()}`);
    const [item] = await alice.submit(
      `&(executable="/bin/sh")(arguments="-c" "while [ ! -e ${go} ]; do sleep 0.05; done")(stdout="out.txt")${extra}`,
    );
    const id = item.id as string;
    await alice.waitFor([id], ['RUNNING']);
    await replace(id, { link });
    await writeFile(go, '');
    try {
      assert.equal((await alice.waitFor([id], ['FAILED', 'FINISHED'])).get(id), 'FAILED');
    } finally {
      await rm(go, { force: true });
    }
    return id;
  };

  it("stage-out of a job that linked its session to another user's session fails without pruning the target", async () => {
    const id = await swappedWhileRunning(victimDir(), '(rerun="1")');
    const replacedLines = async (): Promise<number> =>
      (
        (await alice.req('GET', `/rest/1.1/jobs/${id}/diagnose/errors`)).text.match(
          /Reason: The session directory of job \w+ was replaced/g,
        ) ?? []
      ).length;
    assert.equal(await replacedLines(), 1);
    victimIntact();
    // A restart stages in again (and would run the job there): refused the same way.
    const [r] = await alice.action('restart', [id]);
    assert.equal(r['status-code'], '202', JSON.stringify(r));
    const deadline = Date.now() + 30_000;
    while ((await replacedLines()) < 2 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    assert.equal(await replacedLines(), 2);
    assert.equal((await alice.waitFor([id], ['FAILED'])).get(id), 'FAILED');
    victimIntact();
    await alice.action('clean', [id]);
    await alice.waitFor([id], ['HTTP404']);
    assert.ok(!exists(join(sessions, id)));
    assert.ok(!exists(join(sessions, `${id}.moved`)));
    victimIntact();
  });

  it('stage-out of a job that linked its session to the state directory leaves the state alone', async () => {
    const id = await swappedWhileRunning(ceres.stateDir);
    stateIntact();
    assert.ok(existsSync(join(sessions, `${id}.moved`, 'out.txt')), "the job's real directory kept its output");
    // The service still works with its database.
    assert.equal((await alice.status([id])).get(id), 'FAILED');
  });

  it('wipe at the end of the session lifetime removes the link and the renamed directory, not the state', async () => {
    const id = await finished(alice, '&(executable="/bin/echo")(arguments="x")(stdout="o")(lifetime="3")');
    await replace(id, { link: ceres.stateDir });
    const st = await alice.waitFor([id], ['WIPED'], 30_000);
    assert.equal(st.get(id), 'WIPED');
    // The wipe is recorded before its effect runs (every transition is persisted first):
    // on a loaded machine the removal may still be under way when the state says WIPED.
    const gone = () => !exists(join(sessions, id)) && !exists(join(sessions, `${id}.moved`));
    for (const deadline = Date.now() + 30_000; !gone() && Date.now() < deadline;)
      await new Promise((res) => setTimeout(res, 50));
    assert.ok(!exists(join(sessions, id)));
    assert.ok(!exists(join(sessions, `${id}.moved`)));
    stateIntact();
    victimIntact();
  });
});
