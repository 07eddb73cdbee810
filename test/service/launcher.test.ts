/**
 * bin/ceres, the command operations run: it must exec node (the pid it was started as
 * is the service's own: pid files and service managers rely on it), with the heap
 * flags the service's memory depends on, the C library's malloc by default and jemalloc
 * preloaded with CERES_MALLOC=jemalloc (refused when it is not installed).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, tempDir } from '../helpers/service.js';

const LAUNCHER = fileURLToPath(new URL('../../../bin/ceres', import.meta.url));
const JEMALLOC = [
  '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2',
  '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2',
  '/usr/lib64/libjemalloc.so.2',
  '/usr/lib/libjemalloc.so.2',
].find((f) => existsSync(f));

async function serve(stateDir: string, env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string }> {
  const config = join(stateDir, 'test-config.json');
  writeFileSync(config, JSON.stringify({ log: { level: 'warn' } }));
  const child = spawn(LAUNCHER, ['serve', '--listen', '127.0.0.1:0', '--state-dir', stateDir, '--config', config], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const deadline = Date.now() + 90_000;
  while (!/service URL \S+/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`bin/ceres did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, output: () => out };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill('SIGTERM');
  await gone;
}

async function runHelp(env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(LAUNCHER, ['--help'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  return { code, out, err };
}

const mapsOf = (pid: number): string => readFileSync(`/proc/${pid}/maps`, 'utf8');
const argvOf = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);

describe('bin/ceres', () => {
  const state = tempDir('launcher');
  after(() => removeDir(state));

  it('execs node itself (same pid) with the heap flags and the C library malloc', async () => {
    const { child } = await serve(state, { CERES_MALLOC: '' });
    try {
      const argv = argvOf(child.pid as number);
      assert.match(
        argv[0] ?? '',
        /node$/,
        `pid ${child.pid} runs ${argv.join(' ')}, not node: the launcher did not exec`,
      );
      assert.ok(argv.includes('--no-memory-reducer'), argv.join(' '));
      assert.ok(
        argv.some((a) => /^--heap-growing-percent=\d+$/.test(a)),
        `no heap growth cap in ${argv.join(' ')}`,
      );
      // The heap policy (src/process/heap-policy.ts) needs gc to collect after a burst.
      assert.ok(argv.includes('--expose-gc'), argv.join(' '));
      assert.ok(argv.includes('serve'), argv.join(' '));
      assert.ok(!mapsOf(child.pid as number).includes('libjemalloc'), 'jemalloc loaded without CERES_MALLOC=jemalloc');
    } finally {
      await stop(child);
    }
  });

  it(
    'preloads jemalloc with CERES_MALLOC=jemalloc',
    { skip: JEMALLOC === undefined && 'libjemalloc.so.2 is not installed here (CI installs libjemalloc2)' },
    async () => {
      const { child } = await serve(state, { CERES_MALLOC: 'jemalloc' });
      try {
        assert.match(argvOf(child.pid as number)[0] ?? '', /node$/);
        assert.ok(
          mapsOf(child.pid as number).includes('libjemalloc'),
          'CERES_MALLOC=jemalloc but jemalloc is not loaded',
        );
      } finally {
        await stop(child);
      }
    },
  );

  it(
    'refuses CERES_MALLOC=jemalloc where jemalloc is not installed',
    { skip: JEMALLOC !== undefined && 'libjemalloc.so.2 is installed here' },
    async () => {
      const r = await runHelp({ CERES_MALLOC: 'jemalloc' });
      assert.equal(r.code, 2);
      assert.match(r.err, /libjemalloc2/);
    },
  );

  it('refuses an unknown CERES_MALLOC with a clear message instead of guessing', async () => {
    const r = await runHelp({ CERES_MALLOC: 'tcmalloc' });
    assert.equal(r.code, 2);
    assert.match(r.err, /CERES_MALLOC must be system or jemalloc/);
  });

  it('passes CERES_NODE_FLAGS to node and the arguments to the command', async () => {
    const r = await runHelp({ CERES_NODE_FLAGS: '--stack-size=900' });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Usage: ceres/);
    const bad = await runHelp({ CERES_NODE_FLAGS: '--no-such-node-flag' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.err, /no-such-node-flag/);
  });
});
