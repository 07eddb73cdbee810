// The launcher on its own, the C one and the Node fallback alike: what it starts (exact
// arguments and environment, own session, stdio, no extra descriptor, default signals),
// what a child can do to it (no newline, a huge first line, a flood after it, dying
// early), thousands of spawns in one go with every exit reported, and its death.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LauncherClient, type LauncherProgram, type Started } from '../../src/lrms/fork/launcher-client.js';
import { LINE_MAX } from '../../src/lrms/fork/launcher-protocol.js';
import { ensureLauncher } from '../../src/lrms/fork/launcher-build.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { NASTY_TEXTS } from '../helpers/nasty-text.js';
import { until } from './backend.case.js';

const SH = '/bin/sh';
const ENV = { PATH: '/usr/bin:/bin' };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/s.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Where a descriptor link points, or undefined once it is closed (between listing and reading). */
function linkOrGone(link: string): string | undefined {
  try {
    return readlinkSync(link);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}

for (const kind of ['c', 'node'] as const) {
  describe(`launcher (${kind})`, () => {
    let root = '';
    let program: LauncherProgram = { kind: 'node' };
    let client: LauncherClient;
    const exits = new Map<number, boolean[]>();
    let deaths = 0;
    const started: number[] = [];

    const newClient = (): LauncherClient =>
      new LauncherClient(
        {
          onExit: (pid, claimed) => exits.set(pid, [...(exits.get(pid) ?? []), claimed]),
          onDeath: () => deaths++,
        },
        program,
      );

    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'ceres-launcher-'));
      if (kind === 'c') program = await ensureLauncher(root, 'c', 'cc');
      client = newClient();
    });
    after(async () => {
      for (const pid of started) killGroup(pid);
      await client.close();
      await rm(root, { recursive: true, force: true });
    });

    /** Start `sh -c script` (kept for the clean-up). */
    async function sh(script: string, args: string[] = [], env: Record<string, string> = ENV): Promise<Started> {
      const s = await client.spawn(SH, ['-c', script, 'sh', ...args], env);
      started.push(s.pid);
      return s;
    }

    it('is the program asked for', () => {
      assert.equal(client.program.kind, kind);
      if (kind === 'c') assert.match((client.program as { path: string }).path, /\/bin\/launcher-[0-9a-f]{16}$/);
    });

    it('passes arguments and environment byte for byte (anything but NUL)', async () => {
      const odd = [
        ...NASTY_TEXTS,
        'a\nb',
        '{"op":"exit","pid":1,"claimed":true}\n',
        '\u007f\u00ff',
        '=x',
        ' lead',
        'x'.repeat(100_000),
        '中文',
      ];
      const env: Record<string, string> = {
        PATH: '/usr/bin:/bin',
        EMPTY: '',
        'A.B': 'v=w\nx',
        ODD: NASTY_TEXTS.join('|'),
        LONG: 'y'.repeat(50_000),
      };
      const script = 'echo "ok $$ 0"; while :; do sleep 1; done';
      const s = await sh(script, odd, env);
      assert.equal(s.line, `ok ${s.pid} 0`);
      const argv = readFileSync(`/proc/${s.pid}/cmdline`);
      assert.deepEqual(argv, Buffer.from([SH, '-c', script, 'sh', ...odd].map((a) => `${a}\0`).join('')));
      const environ = readFileSync(`/proc/${s.pid}/environ`);
      const want = Object.entries(env).map(([k, v]) => `${k}=${v}\0`);
      // Node's spawn() adds NODE_V8_COVERAGE to every child's given environment while
      // coverage is collected (npm test runs under c8), so the Node launcher's wrapper
      // has it then; outside coverage it is not there.
      const coverage = (e: string): boolean =>
        kind === 'node' && process.env.NODE_V8_COVERAGE !== undefined && e.startsWith('NODE_V8_COVERAGE=');
      assert.deepEqual(
        environ
          .toString('utf8')
          .split(/(?<=\0)/)
          .filter((e) => !coverage(e))
          .sort(),
        want.sort(),
        'exactly the given environment, nothing of the service or the launcher',
      );
      killGroup(s.pid);
      await until('the exit report', () => exits.has(s.pid));
      assert.deepEqual(exits.get(s.pid), [true]);
    });

    it('refuses what the protocol cannot carry (a NUL, a name with "="), and goes on', async () => {
      for (const [args, env] of [
        [['a\0b'], ENV],
        [[], { ...ENV, X: 'a\0b' }],
        [[], { ...ENV, 'A=B': 'c' }],
      ] as const) {
        await assert.rejects(client.spawn(SH, ['-c', 'echo ok', ...args], env), (e: unknown) => {
          return isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED';
        });
      }
      assert.equal((await sh('echo fine')).line, 'fine');
    });

    it('a program that cannot be started is an error answer', async () => {
      await assert.rejects(client.spawn('/nonexistent/program', [], ENV), (e: unknown) => {
        return isCeError(e) && e.code === 'CE_ERR_LRMS_SUBMIT_FAILED' && /ENOENT|No such file/.test(e.message);
      });
    });

    it('runs it in its own session, stdin and stderr /dev/null, stdout a pipe, no other descriptor, default signals', async () => {
      const s = await sh('echo "ok $$ 0"; exec sleep 60');
      await until('the exec of sleep', () => readFileSync(`/proc/${s.pid}/cmdline`, 'utf8').startsWith('sleep'));
      const stat = readFileSync(`/proc/${s.pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      assert.equal(Number(fields[3]), s.pid, 'session leader (setsid)');
      assert.equal(Number(fields[2]), s.pid, 'process group leader');
      // After its exec, sleep's loader and C library open their own files (libc, the locale
      // aliases) for a moment, as descriptor 3: a look in that moment sees them. What the
      // launcher passed on stays for the process's life, so wait for those to be closed.
      const starting = (target: string): boolean => /^\/(usr|lib|etc)\//.test(target);
      const extraFds = (): Map<string, string> => {
        const fds = new Map<string, string>();
        for (const fd of readdirSync(`/proc/${s.pid}/fd`)) {
          const target = ['0', '1', '2'].includes(fd) ? undefined : linkOrGone(`/proc/${s.pid}/fd/${fd}`);
          if (target !== undefined) fds.set(fd, target);
        }
        return fds;
      };
      await until("sleep's start-up files closed", () => ![...extraFds().values()].some(starting), 5_000);
      const extra = extraFds();
      if (kind === 'c') assert.deepEqual([...extra.keys()], [], 'the C launcher passes on no other descriptor');
      else {
        // The Node launcher cannot close what its parent left open without close-on-exec
        // (the wrapper closes it for the job), but it passes on nothing of its own: not
        // its protocol pipes, not its event loop's descriptors.
        const launcher = client.pid;
        assert.ok(launcher !== undefined);
        const own = new Set(
          readdirSync(`/proc/${launcher}/fd`)
            .filter((fd) => ['0', '1'].includes(fd))
            .map((fd) => readlinkSync(`/proc/${launcher}/fd/${fd}`)),
        );
        for (const [fd, target] of extra) {
          assert.ok(!own.has(target), `descriptor ${fd} (${target}) is one of the launcher's protocol pipes`);
          assert.ok(!target.startsWith('anon_inode:'), `descriptor ${fd} (${target}) is the launcher's own`);
        }
      }
      assert.equal(readlinkSync(`/proc/${s.pid}/fd/0`), '/dev/null');
      assert.equal(readlinkSync(`/proc/${s.pid}/fd/2`), '/dev/null');
      assert.match(readlinkSync(`/proc/${s.pid}/fd/1`), /^(pipe|socket):/);
      const status = readFileSync(`/proc/${s.pid}/status`, 'utf8');
      assert.match(status, /^SigBlk:\s+0+$/m, 'no blocked signal');
      // Signals 1-31 (32 and 33 are the C library's own, left as the library sets them).
      const ignored = BigInt(`0x${/^SigIgn:\s+([0-9a-f]+)$/m.exec(status)?.[1] ?? 'ff'}`);
      assert.equal(ignored & 0x7fff_ffffn, 0n, 'no ignored signal');
      killGroup(s.pid);
      await until('the exit report', () => exits.has(s.pid));
    });

    it(`answers at once with at most ${LINE_MAX} bytes of a first line that does not end`, async () => {
      const s = await sh("head -c 1000000 /dev/zero | tr '\\0' a; exec sleep 60");
      assert.equal(s.line, 'a'.repeat(LINE_MAX));
      assert.ok(alive(s.pid), 'answered before the program ended');
      killGroup(s.pid);
      await until('the exit report', () => exits.has(s.pid));
      assert.deepEqual(exits.get(s.pid), [false]);
    });

    it('drops what follows the first line (a flood) and stays responsive', async () => {
      const s = await sh('echo "ok $$ 0"; while :; do head -c 1000000 /dev/urandom; done');
      assert.equal(s.line, `ok ${s.pid} 0`);
      for (let i = 0; i < 5; i++) assert.equal((await sh(`echo "ok $$ ${i}"`)).line.endsWith(` ${i}`), true);
      killGroup(s.pid);
      await until('the exit report', () => exits.has(s.pid));
      assert.deepEqual(exits.get(s.pid), [true]);
    });

    it('output without a newline is the answer once the program ends (trimmed), then its exit', async () => {
      const s = await sh("printf '  ok partial  '");
      assert.equal(s.line, 'ok partial');
      await until('the exit report', () => exits.has(s.pid));
      assert.deepEqual(exits.get(s.pid), [true]);
    });

    it('a program killed before it wrote anything: an empty answer, then its exit', async () => {
      const s = await sh('kill -9 $$');
      assert.equal(s.line, '');
      await until('the exit report', () => exits.has(s.pid));
      assert.deepEqual(exits.get(s.pid), [false]);
    });

    // The Node launcher starts programs through libuv, a third as fast as the C one: 1,000
    // of them are as many at once as its pipes ever hold, in a third of the time.
    const count = kind === 'c' ? 3000 : 1000;
    it(`${count.toLocaleString('en')} spawns at once: every one answered, every exit reported once`, async () => {
      const all = await Promise.all(
        Array.from({ length: count }, (_, i) => client.spawn(SH, ['-c', `echo "ok $$ ${i}"`], ENV)),
      );
      all.forEach((s, i) => assert.equal(s.line, `ok ${s.pid} ${i}`));
      assert.equal(new Set(all.map((s) => s.pid)).size, count);
      await until('every exit', () => all.every((s) => exits.has(s.pid)), 120_000);
      for (const s of all) assert.deepEqual(exits.get(s.pid), [true]);
    });

    it('dies: pending spawns fail, onDeath is called, the next spawn starts a new one; its wrappers live on', async () => {
      const running = await sh('echo "ok $$ 0"; exec sleep 60');
      const launcher = client.pid ?? 0;
      assert.ok(launcher > 0);
      const marker = `pending-${process.pid}-${Date.now()}`;
      const pending = client.spawn(SH, ['-c', 'while :; do sleep 1; done', marker], ENV); // never answers by itself
      await new Promise((r) => setTimeout(r, 200));
      const before = deaths;
      process.kill(launcher, 'SIGKILL');
      await assert.rejects(pending, (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_UNAVAILABLE');
      assert.equal(deaths, before + 1);
      assert.ok(alive(running.pid), 'the wrapper keeps running');
      assert.equal((await sh('echo again')).line, 'again');
      assert.notEqual(client.pid, launcher);
      // The pending spawn's program, orphaned: found by its marker, killed with its group.
      for (const d of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
        try {
          if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) started.push(Number(d));
        } catch {
          /* gone */
        }
      }
    });

    it('lets go of its wrappers when the service closes its input, and ends', async () => {
      const other = newClient();
      const s = await other.spawn(SH, ['-c', 'echo "ok $$ 0"; exec sleep 60'], ENV);
      started.push(s.pid);
      const launcher = other.pid ?? 0;
      const before = deaths;
      await other.close();
      await until('the launcher to end', () => !alive(launcher), 10_000);
      assert.ok(alive(s.pid), 'the wrapper keeps running');
      assert.equal(deaths, before, 'a close is no death');
    });
  });
}
