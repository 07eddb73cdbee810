// Crash safety: a job acknowledged with 201 survives `kill -9` of the service at any
// moment and runs exactly once. Each test job appends its id to a shared ledger file
// outside the session directory; after the restarts every job must be FINISHED and
// appear in the ledger exactly once.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import {
  Client,
  jobWritableFile,
  processAlive,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
} from '../helpers/service.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

function ledgerJob(script: string, sleep: number): string {
  return `&(executable="${script}")(arguments="${sleep}")(stdout="o")`;
}

function setup(): { dir: string; script: string; ledger: string } {
  const dir = tempDir('crash');
  const ledger = join(dir, 'ledger');
  const script = join(dir, 'job.sh');
  writeFileSync(script, `#!/bin/sh\necho "$RUNTIME_JOB_ID" >> ${ledger}\nsleep "$1"\necho done\n`);
  chmodSync(script, 0o755);
  // The jobs run as an unprivileged account when the tests run as root: they may append.
  jobWritableFile(ledger);
  return { dir, script, ledger };
}

function runsPerJob(ledger: string): Map<string, number> {
  const m = new Map<string, number>();
  if (!existsSync(ledger)) return m;
  for (const l of readFileSync(ledger, 'utf8').split('\n')) if (l) m.set(l, (m.get(l) ?? 0) + 1);
  return m;
}

/** Restart on `stateDir`, wait for every job to end, and check each FINISHED exactly once. */
async function restartAndCheck(
  dir: string,
  ids: readonly string[],
  ledger: string,
  extra?: (c: Client) => Promise<void>,
): Promise<void> {
  const ceres = await startCeres({ stateDir: join(dir, 'state') });
  const c = Client.forUser(ceres);
  try {
    const st = await c.waitFor([...ids], FINAL, 120_000);
    assert.deepEqual([...new Set(st.values())], ['FINISHED']);
    const runs = runsPerJob(ledger);
    for (const id of ids) assert.equal(runs.get(id), 1, `job ${id} ran ${runs.get(id) ?? 0} times`);
    await extra?.(c);
  } finally {
    await c.close();
    await stopCeres(ceres);
    removeDir(dir);
  }
}

/** Submit `n` ledger jobs in one request. */
async function submitMany(c: Client, script: string, n: number, sleep: number): Promise<string[]> {
  const items = await c.submit(`+${Array.from({ length: n }, () => `(${ledgerJob(script, sleep)})`).join('')}`);
  assert.equal(items.length, n);
  return items.map((i) => i.id as string);
}

describe('crash safety (kill -9 of the service)', () => {
  it('jobs acknowledged just before kill -9 are all run, exactly once, after a restart', async () => {
    const { dir, script, ledger } = setup();
    const ceres = await startCeres({ stateDir: join(dir, 'state') });
    const c = Client.forUser(ceres);
    const ids = await submitMany(c, script, 40, 0);
    await stopCeres(ceres, 'SIGKILL');
    await c.close();
    await restartAndCheck(dir, ids, ledger);
  });

  it('jobs running when the service is killed keep running and are collected exactly once', async () => {
    const { dir, script, ledger } = setup();
    const ceres = await startCeres({ stateDir: join(dir, 'state') });
    const c = Client.forUser(ceres);
    const ids = await submitMany(c, script, 5, 3);
    await c.waitFor(ids, ['RUNNING']);
    await stopCeres(ceres, 'SIGKILL');
    await c.close();
    await restartAndCheck(dir, ids, ledger, async (c2) => {
      assert.equal((await c2.req('GET', `/rest/1.1/jobs/${ids[0]}/session/o`)).text, 'done\n');
    });
  });

  it('repeated kill -9 at arbitrary moments of a busy run loses nothing and runs nothing twice', async () => {
    const { dir, script, ledger } = setup();
    const ids: string[] = [];
    for (let round = 0; round < 4; round++) {
      const ceres = await startCeres({ stateDir: join(dir, 'state') });
      const c = Client.forUser(ceres);
      ids.push(...(await submitMany(c, script, 25, 0)));
      await new Promise((r) => setTimeout(r, 50 + round * 120));
      await stopCeres(ceres, 'SIGKILL');
      await c.close();
    }
    await restartAndCheck(dir, ids, ledger);
  });

  it('a kill requested just before kill -9 is carried out after the restart: KILLED, process gone', async () => {
    const dir = tempDir('crash-kill');
    const ceres = await startCeres({ stateDir: join(dir, 'state') });
    const c = Client.forUser(ceres);
    const [item] = await c.submit('&(executable="/bin/sleep")(arguments="300")');
    await c.waitFor([item.id], ['RUNNING']);
    const [info] = await c.action('info', [item.id]);
    const pid = Number(info.info_document.ComputingActivity.LocalIDFromManager);
    const [k] = await c.action('kill', [item.id]);
    assert.equal(k['status-code'], '202');
    await stopCeres(ceres, 'SIGKILL');
    await c.close();
    const again = await startCeres({ stateDir: join(dir, 'state') });
    const c2 = Client.forUser(again);
    try {
      assert.equal((await c2.waitFor([item.id], FINAL, 60_000)).get(item.id), 'KILLED');
      assert.equal(processAlive(pid), false);
    } finally {
      await c2.close();
      await stopCeres(again);
      removeDir(dir);
    }
  });

  it('SIGTERM shuts down gracefully with exit status 0', async () => {
    const dir = tempDir('term');
    const ceres = await startCeres({ stateDir: dir });
    assert.equal(await stopCeres(ceres, 'SIGTERM'), 0);
    removeDir(dir);
  });
});
