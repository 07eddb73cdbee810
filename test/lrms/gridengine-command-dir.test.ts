// Where the Grid Engine backend runs its commands from without a configured binDir: Grid
// Engine's own $SGE_ROOT/bin/<arch> (util/arch asked once), not Debian's wrapper on PATH
// that asks it at every call; PATH where that directory is not there or not usable. On a
// made-up SGE_ROOT: no Grid Engine is needed.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { geCommandDir } from '../../src/lrms/gridengine/command-dir.js';
import { GridEngineBackend } from '../../src/lrms/gridengine/gridengine-backend.js';

let root = '';
let n = 0;

async function script(path: string, body: string): Promise<void> {
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
}

/** A made-up SGE_ROOT whose util/arch runs `archBody` (and leaves a mark that it ran), with `tools` in bin/lx-test. */
async function sgeRoot(archBody: string, tools: readonly string[] = ['qsub', 'qstat']): Promise<string> {
  const dir = join(root, `sge-${++n}`);
  await mkdir(join(dir, 'util'), { recursive: true });
  await mkdir(join(dir, 'bin', 'lx-test'), { recursive: true });
  await script(join(dir, 'util', 'arch'), `: > "$SGE_ROOT/arch-ran"\n${archBody}`);
  for (const t of tools) await script(join(dir, 'bin', 'lx-test', t), 'exit 1');
  return dir;
}

describe('the Grid Engine command directory', () => {
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-ge-bin-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('uses $SGE_ROOT/bin/<arch> when it holds qsub and qstat, util/arch asked once', async () => {
    const dir = await sgeRoot('echo lx-test');
    assert.equal(await geCommandDir('', dir), join(dir, 'bin', 'lx-test'));
  });

  it("the backend submits with that directory's qsub, not the one on PATH", async () => {
    const dir = await sgeRoot('echo lx-test');
    await script(join(dir, 'bin', 'lx-test', 'qsub'), 'echo 4242');
    await script(join(dir, 'bin', 'lx-test', 'qstat'), `echo "<?xml version='1.0'?><job_info></job_info>"`);
    const b = await GridEngineBackend.create({ workDir: join(root, 'backend'), sgeRoot: dir, wrapper: 'sh' });
    try {
      const sessionDir = join(root, 'session');
      await mkdir(sessionDir);
      const id = await b.submit({
        jobId: 'gebin1',
        sessionDir,
        lrmsDir: join(root, 'lrms-1'),
        executable: '/bin/true',
        arguments: [],
        environment: [],
        runtimeEnvironments: [],
        limits: {},
        slots: 1,
      });
      assert.equal(id, '4242');
    } finally {
      await b.close();
    }
  });

  it('a configured binDir is used as it is, and util/arch is not run', async () => {
    const dir = await sgeRoot('echo lx-test');
    assert.equal(await geCommandDir('/opt/site/bin', dir), '/opt/site/bin');
    assert.equal(existsSync(join(dir, 'arch-ran')), false);
  });

  it('SGE_ROOT from the environment when the configuration names none; neither: PATH', async () => {
    const dir = await sgeRoot('echo lx-test');
    const saved = process.env.SGE_ROOT;
    try {
      process.env.SGE_ROOT = dir;
      assert.equal(await geCommandDir('', ''), join(dir, 'bin', 'lx-test'));
      delete process.env.SGE_ROOT;
      assert.equal(await geCommandDir('', ''), '');
    } finally {
      if (saved === undefined) delete process.env.SGE_ROOT;
      else process.env.SGE_ROOT = saved;
    }
  });

  it('no util/arch, or one that fails: PATH', async () => {
    assert.equal(await geCommandDir('', join(root, 'no-such-root')), '');
    assert.equal(await geCommandDir('', await sgeRoot('echo lx-test; exit 1')), '');
  });

  it('an arch that is not a plain name (a path, nothing, several lines): PATH', async () => {
    for (const body of ['echo ../../../usr/bin', 'true', 'printf "lx-test\\nother\\n"', 'echo /tmp']) {
      assert.equal(await geCommandDir('', await sgeRoot(body)), '', body);
    }
  });

  it('an arch directory without qsub or qstat, or with them not executable: PATH', async () => {
    assert.equal(await geCommandDir('', await sgeRoot('echo lx-test', ['qstat'])), '');
    assert.equal(await geCommandDir('', await sgeRoot('echo lx-test', ['qsub'])), '');
    const dir = await sgeRoot('echo lx-test');
    await chmod(join(dir, 'bin', 'lx-test', 'qsub'), 0o644);
    // Root may run a file without x bits only if some x bit is set: none is.
    assert.equal(await geCommandDir('', dir), '');
  });

  it('an arch that hangs is given up at the timeout: PATH', async () => {
    const t0 = Date.now();
    assert.equal(await geCommandDir('', await sgeRoot('exec sleep 30'), 300), '');
    assert.ok(Date.now() - t0 < 20_000, 'bounded by the timeout, not the script');
  });
});
