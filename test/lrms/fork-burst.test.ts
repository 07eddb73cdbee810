// Bursts of short jobs in the fork backend: a wrapper may end before its submit() has
// registered the job (the launcher reports the exit first). Every such exit must reach
// its job — kept until consumed, or, past the bound on kept exits, found again from the
// status file — and the periodic backstop must end a job whose exit was never reported.
import { describe, it, before, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkBackend, type ForkBackendOptions } from '../../src/lrms/fork/fork-backend.js';
import type { BatchJobSpec, BatchResult } from '../../src/lrms/backend.js';
import { until } from './backend.case.js';

/** Keep the event loop busy: nothing of ours runs while the launcher and the jobs go on. */
function blockFor(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* busy */
  }
}

describe('fork backend under a burst of short jobs', () => {
  let root = '';
  let n = 0;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-burst-'));
  });
  after(() => rm(root, { recursive: true, force: true }));

  async function backend(
    t: TestContext,
    extra: Partial<ForkBackendOptions>,
  ): Promise<{ b: ForkBackend; finals: Map<string, BatchResult[]> }> {
    const b = await ForkBackend.create({
      workDir: join(root, 'backend'),
      wrapper: 'c',
      killGraceSeconds: 2,
      pollIntervalMs: 100,
      ...extra,
    });
    t.after(() => b.close());
    const finals = new Map<string, BatchResult[]>();
    b.onUpdate((id, u) => {
      if (u.kind === 'final') finals.set(id, [...(finals.get(id) ?? []), u.result]);
    });
    return { b, finals };
  }

  async function specs(count: number): Promise<BatchJobSpec[]> {
    const out: BatchJobSpec[] = [];
    for (let k = 0; k < count; k++) {
      const i = ++n;
      const sessionDir = join(root, `s${i}`);
      await mkdir(sessionDir, { recursive: true });
      out.push({
        jobId: `burst-${i}`,
        sessionDir,
        lrmsDir: join(root, `l${i}`),
        executable: '/bin/true',
        arguments: [],
        environment: [],
        runtimeEnvironments: [],
        limits: {},
        slots: 1,
      });
    }
    return out;
  }

  /**
   * Submit all of `list` and, once every spawn request has gone out, hold the event loop
   * while the wrappers start and end: the launcher's "started" and "exit" lines then
   * arrive together, so every exit is seen before its submit() registers the job.
   */
  async function burst(b: ForkBackend, list: readonly BatchJobSpec[]): Promise<string[]> {
    const submitted = Promise.all(list.map((s) => b.submit(s)));
    await until(
      'every job script to be written',
      () => list.every((s) => existsSync(join(s.lrmsDir, 'job.sh'))),
      30_000,
    );
    await new Promise((r) => setImmediate(r));
    blockFor(1500);
    return submitted;
  }

  it('wrappers that end before their submit() resolves are all reported, beyond the bound on kept exits', async (t) => {
    const { b, finals } = await backend(t, { maxUnclaimedExits: 4 });
    const ids = await burst(b, await specs(60));
    await until('a final update of every job', () => ids.every((id) => finals.has(id)), 20_000);
    for (const id of ids) {
      assert.equal(finals.get(id)?.length, 1, `job ${id}: one final update`);
      assert.equal(finals.get(id)?.[0]?.exitCode, 0);
    }
  });

  it('the same burst with the default bound: every job ends once', async (t) => {
    const { b, finals } = await backend(t, {});
    const ids = await burst(b, await specs(60));
    await until('a final update of every job', () => ids.every((id) => finals.has(id)), 20_000);
    for (const id of ids) assert.equal(finals.get(id)?.length, 1, `job ${id}: one final update`);
  });

  it('the backstop ends a job whose exit was never reported, without the regular polling', async (t) => {
    // The launcher dies: its exits are gone, and the regular polling is made too slow to matter.
    const { b, finals } = await backend(t, { pollIntervalMs: 3_600_000, backstopIntervalMs: 200 });
    const [s] = await specs(1);
    const spec = {
      ...(s as BatchJobSpec),
      executable: '/bin/sh',
      arguments: ['-c', 'while [ ! -e go ]; do sleep 0.05; done'],
    };
    const id = await b.submit(spec);
    const launcher = b.launcherPid ?? 0;
    process.kill(launcher, 'SIGKILL');
    await until('the launcher to be gone', () => b.launcherPid !== launcher, 10_000);
    const { writeFile } = await import('node:fs/promises');
    await writeFile(join(spec.sessionDir, 'go'), '');
    await until('the final update', () => finals.has(id), 10_000);
    assert.equal(finals.get(id)?.[0]?.exitCode, 0);
  });
});
