// The batch backend conformance suite: every backend (fork, Slurm, ...) runs it through
// `runBackendSuite`, declaring what it cannot do with a reason. Jobs are real processes
// writing real files; assertions wait for outcomes, never for a duration.
import { describe, it, before, after } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchBackend, BatchJobRef, BatchJobSpec, BatchResult, BatchUpdate } from '../../src/lrms/backend.js';
import { isCeError } from '../../src/errors/ce-error.js';

/** Every test of the suite, by the name used in `skip`. */
export const SUITE_TESTS = [
  'echo',
  'exit-0-no-output',
  'exit-code',
  'crash-signal',
  'stderr',
  'stdin',
  'join',
  'environment',
  'runtime-environment',
  'missing-executable',
  'wall-time-limit',
  'cpu-time-limit',
  'memory-limit',
  'cancel-process-group',
  'cancel-at-once',
  'cancel-unknown',
  'usage',
  'max-rss',
  'diag',
  'submit-twice',
  'recover-running',
  'recover-ended',
  'many-jobs',
  'bad-spec',
  'closed',
] as const;
export type SuiteTest = (typeof SUITE_TESTS)[number];

export interface BackendSuiteOptions {
  readonly name: string;
  /** A new backend instance; `workDir` is the backend's own directory, shared by the instances of one suite run. */
  readonly newBackend: (ctx: { readonly workDir: string }) => Promise<BatchBackend>;
  readonly skip?: readonly { readonly reason: string; readonly tests: readonly SuiteTest[] }[];
  /** Jobs in the many-jobs test (default 200). */
  readonly manyJobs?: number;
  /** How long to keep listening for a duplicate final update after the first (default 1500 ms). */
  readonly settleMs?: number;
}

/** Records every update and lets a test wait for a job's final one. */
class Recorder {
  readonly updates: Array<{ localId: string; update: BatchUpdate }> = [];
  /** Contract violations seen by the listener (asserting there would only reach the backend). */
  readonly violations: string[] = [];
  readonly #waiters = new Map<string, (r: BatchResult) => void>();
  readonly #finals = new Map<string, BatchResult>();

  listen(b: BatchBackend): void {
    b.onUpdate((localId, update) => {
      if (this.#finals.has(localId)) this.violations.push(`${update.kind} update after the final one for ${localId}`);
      this.updates.push({ localId, update });
      if (update.kind === 'final') {
        this.#finals.set(localId, update.result);
        this.#waiters.get(localId)?.(update.result);
      }
    });
  }

  finals(localId: string): number {
    return this.updates.filter((u) => u.localId === localId && u.update.kind === 'final').length;
  }

  final(localId: string): Promise<BatchResult> {
    const done = this.#finals.get(localId);
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => this.#waiters.set(localId, resolve));
  }
}

export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The pid a job wrote to `file` (a complete line), or 0 while there is none. Never 0 for a kill: that is our own group. */
export function pidIn(file: string): number {
  try {
    const m = /^([1-9]\d*)\n$/.exec(readFileSync(file, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** A process is gone when it does not exist or is a zombie nobody reaps. */
function gone(pid: number): boolean {
  assert.ok(pid > 0);
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

export function runBackendSuite(options: BackendSuiteOptions): void {
  const skipped = new Map<string, string>();
  for (const s of options.skip ?? []) {
    for (const t of s.tests) {
      if (!SUITE_TESTS.includes(t)) throw new Error(`unknown suite test ${t}`);
      skipped.set(t, s.reason);
    }
  }
  const settleMs = options.settleMs ?? 1500;

  describe(`batch backend conformance: ${options.name}`, () => {
    let root = '';
    let workDir = '';
    let seq = 0;

    before(async () => {
      root = await mkdtemp(join(tmpdir(), 'ceres-lrms-'));
      workDir = join(root, 'backend');
    });
    after(async () => {
      await rm(root, { recursive: true, force: true });
    });

    /** A fresh backend with a recorder, closed after the test. */
    async function setup(t: TestContext): Promise<{ b: BatchBackend; rec: Recorder }> {
      const b = await options.newBackend({ workDir });
      const rec = new Recorder();
      rec.listen(b);
      t.after(async () => {
        await b.close();
        assert.deepEqual(rec.violations, []);
      });
      return { b, rec };
    }

    /** A spec with a fresh session and lrms directory. */
    async function spec(patch: Partial<BatchJobSpec> = {}): Promise<BatchJobSpec> {
      const n = ++seq;
      const sessionDir = join(root, `session-${n}`);
      await mkdir(sessionDir, { recursive: true });
      return {
        jobId: `job${n}`,
        sessionDir,
        lrmsDir: join(root, `lrms-${n}`),
        executable: '/bin/sh',
        arguments: ['-c', 'echo hello'],
        stdout: 'out.txt',
        stderr: 'err.txt',
        environment: [],
        runtimeEnvironments: [],
        limits: {},
        slots: 1,
        ...patch,
      };
    }

    const sh = (script: string, patch: Partial<BatchJobSpec> = {}): Promise<BatchJobSpec> =>
      spec({ arguments: ['-c', script], ...patch });
    const session = (s: BatchJobSpec, f: string): string => readFileSync(join(s.sessionDir, f), 'utf8');

    async function run(
      b: BatchBackend,
      rec: Recorder,
      s: BatchJobSpec,
    ): Promise<{ localId: string; result: BatchResult }> {
      const localId = await b.submit(s);
      assert.equal(typeof localId, 'string');
      assert.ok(localId.length > 0);
      return { localId, result: await rec.final(localId) };
    }

    function test(name: SuiteTest, title: string, fn: (t: TestContext) => Promise<void>): void {
      const reason = skipped.get(name);
      it(`${name}: ${title}`, { timeout: 120_000, ...(reason !== undefined ? { skip: reason } : {}) }, fn);
    }

    test('echo', 'runs the executable in the session directory; stdout lands there; exit 0', async (t) => {
      const { b, rec } = await setup(t);
      const s = await spec({ executable: '/bin/echo', arguments: ['hello', 'world'] });
      const { localId, result } = await run(b, rec, s);
      assert.equal(session(s, 'out.txt'), 'hello world\n');
      assert.equal(result.exitCode, 0);
      assert.equal(result.failureReason, undefined);
      assert.equal(result.signal, undefined);
      assert.equal(rec.finals(localId), 1);
      const states = rec.updates.filter((u) => u.localId === localId).map((u) => u.update.kind);
      assert.equal(states.at(-1), 'final', 'the final update comes last');
      for (const u of rec.updates) assert.equal(u.update.jobId, s.jobId);
    });

    test('exit-0-no-output', 'a job that prints nothing and exits 0 succeeds with empty output files', async (t) => {
      const { b, rec } = await setup(t);
      const s = await spec({ executable: '/bin/true', arguments: [] });
      const { result } = await run(b, rec, s);
      assert.equal(result.exitCode, 0);
      assert.equal(result.failureReason, undefined);
      assert.equal(session(s, 'out.txt'), '');
      assert.equal(session(s, 'err.txt'), '');
    });

    test('exit-code', 'a non-zero exit code is reported as such, not as a backend failure', async (t) => {
      const { b, rec } = await setup(t);
      const { result } = await run(b, rec, await sh('exit 3'));
      assert.equal(result.exitCode, 3);
      assert.equal(result.failureReason, undefined);
      assert.equal(result.signal, undefined);
    });

    test('crash-signal', 'a job killed by a signal reports the signal and 128+n', async (t) => {
      const { b, rec } = await setup(t);
      const { result } = await run(b, rec, await sh('kill -SEGV $$'));
      assert.equal(result.signal, 'SIGSEGV');
      assert.equal(result.exitCode, 139);
      assert.equal(result.failureReason, undefined);
    });

    test('stderr', 'stderr goes to its own file', async (t) => {
      const { b, rec } = await setup(t);
      const s = await sh('echo to-out; echo to-err >&2; exit 1');
      const { result } = await run(b, rec, s);
      assert.equal(session(s, 'out.txt'), 'to-out\n');
      assert.equal(session(s, 'err.txt'), 'to-err\n');
      assert.equal(result.exitCode, 1);
    });

    test('stdin', 'stdin is read from a session file', async (t) => {
      const { b, rec } = await setup(t);
      const s = await spec({ executable: '/bin/cat', arguments: [], stdin: 'in.txt' });
      await writeFile(join(s.sessionDir, 'in.txt'), 'line 1\nline 2\n');
      const { result } = await run(b, rec, s);
      assert.equal(result.exitCode, 0);
      assert.equal(session(s, 'out.txt'), 'line 1\nline 2\n');
    });

    test('join', 'join sends stderr into the stdout file', async (t) => {
      const { b, rec } = await setup(t);
      const s = await sh('echo one; echo two >&2; echo three', { join: true });
      await run(b, rec, s);
      assert.equal(session(s, 'out.txt'), 'one\ntwo\nthree\n');
      assert.equal(existsSync(join(s.sessionDir, 'err.txt')), false);
    });

    test('environment', 'job environment variables arrive verbatim, later definitions win', async (t) => {
      const { b, rec } = await setup(t);
      const tricky = `it's "quoted" $HOME \`x\` \\ ; | * ~ \n second line`;
      const s = await sh('printf "%s|%s" "$CERES_A" "$CERES_B"', {
        environment: [
          { name: 'CERES_A', value: tricky },
          { name: 'CERES_B', value: 'first' },
          { name: 'CERES_B', value: 'second' },
        ],
      });
      await run(b, rec, s);
      assert.equal(session(s, 'out.txt'), `${tricky}|second`);
    });

    test(
      'runtime-environment',
      'RTE scripts are sourced before (stage 1) and after (stage 2) the job, with their options',
      async (t) => {
        const { b, rec } = await setup(t);
        const rte = join(root, `rte-${++seq}.sh`);
        await writeFile(
          rte,
          'echo "stage=$1 opts=$2,$3" >> rte.log\nCERES_RTE_VAR="set by rte"; export CERES_RTE_VAR\n',
        );
        const s = await sh('echo "$CERES_RTE_VAR"', {
          runtimeEnvironments: [{ name: 'TEST/RTE', script: rte, options: ['a b', 'c'] }],
        });
        const { result } = await run(b, rec, s);
        assert.equal(result.exitCode, 0);
        assert.equal(session(s, 'out.txt'), 'set by rte\n');
        assert.equal(session(s, 'rte.log'), 'stage=1 opts=a b,c\nstage=2 opts=a b,c\n');
      },
    );

    test('missing-executable', 'an executable that does not exist fails with a reason naming it', async (t) => {
      const { b, rec } = await setup(t);
      for (const executable of ['/nonexistent/program', 'not-staged.sh']) {
        const { result } = await run(b, rec, await spec({ executable, arguments: [] }));
        assert.match(result.failureReason ?? '', /executable not found/);
        assert.ok(result.failureReason?.includes(executable), result.failureReason);
        assert.notEqual(result.exitCode, 0);
      }
    });

    test('wall-time-limit', 'a job over its wall time is stopped with that reason', async (t) => {
      const { b, rec } = await setup(t);
      const s = await sh('echo started; sleep 600', { limits: { wallTimeSeconds: 1 } });
      const { result } = await run(b, rec, s);
      assert.equal(result.failureReason, 'wall time limit exceeded');
      assert.notEqual(result.exitCode, 0);
      assert.equal(session(s, 'out.txt'), 'started\n');
    });

    test('cpu-time-limit', 'a busy job over its CPU time is stopped with that reason', async (t) => {
      const { b, rec } = await setup(t);
      const { result } = await run(
        b,
        rec,
        await sh('while :; do :; done', { limits: { cpuTimeSeconds: 1, wallTimeSeconds: 300 } }),
      );
      assert.equal(result.failureReason, 'cpu time limit exceeded');
    });

    test('memory-limit', 'a job using more memory than allowed is stopped with that reason', async (t) => {
      const { b, rec } = await setup(t);
      // 256 MiB touched and held, limit 128 MiB (the node binary itself needs ~40 MiB).
      const grow = `const b = Buffer.alloc(256 * 1024 * 1024, 1); setTimeout(() => console.log(b.length), 20000);`;
      const { result } = await run(
        b,
        rec,
        await spec({
          executable: process.execPath,
          arguments: ['-e', grow],
          limits: { memoryBytes: 128 * 1024 * 1024, wallTimeSeconds: 300 },
        }),
      );
      assert.equal(result.failureReason, 'memory limit exceeded');
    });

    test('cancel-process-group', 'cancel stops the job and everything it started', async (t) => {
      const { b, rec } = await setup(t);
      const s = await sh('sleep 600 & echo $! > bg.pid; echo $$ > main.pid; wait');
      const localId = await b.submit(s);
      let bg = 0;
      let main = 0;
      await until(
        'the job to start its processes',
        () => (bg = pidIn(join(s.sessionDir, 'bg.pid'))) > 0 && (main = pidIn(join(s.sessionDir, 'main.pid'))) > 0,
      );
      assert.equal(gone(bg), false, 'the background process runs before the cancel');
      assert.equal(await b.cancel(localId), true);
      const result = await rec.final(localId);
      assert.equal(result.failureReason, 'cancelled');
      await until('the main process to be gone', () => gone(main), 10_000);
      await until('the background process to be gone', () => gone(bg), 10_000);
      assert.equal(await b.cancel(localId), false, 'a second cancel after the end finds nothing to stop');
      assert.equal(rec.finals(localId), 1);
    });

    test('cancel-at-once', 'a cancel right after submit stops the job', async (t) => {
      const { b, rec } = await setup(t);
      const s = await sh('sleep 600');
      const localId = await b.submit(s);
      assert.equal(await b.cancel(localId), true);
      const result = await rec.final(localId);
      assert.equal(result.failureReason, 'cancelled');
    });

    test('cancel-unknown', 'cancel of an unknown or ended job answers false', async (t) => {
      const { b, rec } = await setup(t);
      assert.equal(await b.cancel('no-such-job'), false);
      const { localId } = await run(b, rec, await spec({ executable: '/bin/true', arguments: [] }));
      assert.equal(await b.cancel(localId), false);
    });

    test('usage', 'exit code, CPU and wall time, start/end and node are recorded', async (t) => {
      const { b, rec } = await setup(t);
      const { result } = await run(b, rec, await sh('i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done'));
      assert.equal(result.exitCode, 0);
      assert.ok(result.cpuTimeSeconds > 0, `cpu ${result.cpuTimeSeconds}`);
      assert.ok(Math.abs(result.cpuTimeSeconds - (result.userTimeSeconds + result.kernelTimeSeconds)) < 1e-6);
      assert.ok(result.wallTimeSeconds >= 0);
      assert.ok(result.startTime instanceof Date && result.endTime instanceof Date);
      assert.ok(result.startTime.getTime() <= result.endTime.getTime());
      assert.ok(result.nodes.length >= 1 && result.nodes.every((n) => n.length > 0));
    });

    test('max-rss', 'the largest resident set of the job is recorded', async (t) => {
      const { b, rec } = await setup(t);
      const { result } = await run(
        b,
        rec,
        await spec({ executable: process.execPath, arguments: ['-e', 'Buffer.alloc(64 * 1024 * 1024, 1)'] }),
      );
      assert.equal(result.exitCode, 0);
      assert.ok(result.maxRssBytes > 64 * 1024 * 1024, `maxRss ${result.maxRssBytes}`);
    });

    test('diag', 'the lrms directory holds diag key=value accounting when the final update arrives', async (t) => {
      const { b, rec } = await setup(t);
      const s = await sh('exit 4');
      await run(b, rec, s);
      const diag = await readFile(join(s.lrmsDir, 'diag'), 'utf8');
      assert.match(diag, /^exitcode=4$/m);
      assert.match(diag, /^WallTime=[0-9.]+s$/m);
      assert.match(diag, /^UserTime=[0-9.]+s$/m);
      assert.match(diag, /^KernelTime=[0-9.]+s$/m);
      assert.match(diag, /^LRMSStartTime=\d{14}Z$/m);
      assert.match(diag, /^LRMSEndTime=\d{14}Z$/m);
      assert.match(diag, /^nodename=.+$/m);
    });

    test(
      'submit-twice',
      'submitting the same lrms directory again (as after a crash) never runs the job twice',
      async (t) => {
        const { b, rec } = await setup(t);
        const s = await sh('echo run >> runs.txt; while [ ! -e go ]; do sleep 0.05; done');
        const [a, c] = await Promise.all([b.submit(s), b.submit(s)]);
        assert.equal(a, c);
        const again = await b.submit(s);
        assert.equal(again, a);
        await writeFile(join(s.sessionDir, 'go'), '');
        await rec.final(a);
        await new Promise((r) => setTimeout(r, settleMs));
        assert.equal(session(s, 'runs.txt'), 'run\n');
        assert.equal(rec.finals(a), 1);
      },
    );

    test('recover-running', 'a new instance takes over a running job and reports its end exactly once', async (t) => {
      const first = await setup(t);
      const s = await sh('while [ ! -e go ]; do sleep 0.05; done; echo finished');
      const localId = await first.b.submit(s);
      await first.b.close();
      const second = await setup(t);
      const ref: BatchJobRef = { jobId: s.jobId, localId, sessionDir: s.sessionDir, lrmsDir: s.lrmsDir };
      await second.b.recover([ref]);
      await second.b.recover([ref]);
      await writeFile(join(s.sessionDir, 'go'), '');
      const result = await second.rec.final(localId);
      assert.equal(result.exitCode, 0);
      assert.equal(session(s, 'out.txt'), 'finished\n');
      await new Promise((r) => setTimeout(r, settleMs));
      assert.equal(second.rec.finals(localId), 1);
      assert.equal(first.rec.finals(localId), 0, 'the closed instance reports nothing');
    });

    test('recover-ended', 'a job that ended while no instance watched is reported at recovery', async (t) => {
      const first = await setup(t);
      const s = await sh('while [ ! -e go ]; do sleep 0.05; done; echo finished; exit 5');
      const localId = await first.b.submit(s);
      await first.b.close();
      await writeFile(join(s.sessionDir, 'go'), '');
      await until(
        'the job to finish',
        () => existsSync(join(s.sessionDir, 'out.txt')) && session(s, 'out.txt') === 'finished\n',
      );
      const second = await setup(t);
      await second.b.recover([{ jobId: s.jobId, localId, sessionDir: s.sessionDir, lrmsDir: s.lrmsDir }]);
      const result = await second.rec.final(localId);
      assert.equal(result.exitCode, 5);
      assert.equal(second.rec.finals(localId), 1);
    });

    test('many-jobs', 'many jobs submitted at once all complete, each reported once', async (t) => {
      const { b, rec } = await setup(t);
      const n = options.manyJobs ?? 200;
      const specs = await Promise.all(
        Array.from({ length: n }, (_, i) => spec({ executable: '/bin/echo', arguments: [`job ${i}`] })),
      );
      const results = await Promise.all(specs.map((s) => run(b, rec, s)));
      assert.equal(new Set(results.map((r) => r.localId)).size, n, 'local ids are distinct');
      specs.forEach((s, i) => assert.equal(session(s, 'out.txt'), `job ${i}\n`));
      for (const r of results) {
        assert.equal(r.result.exitCode, 0);
        assert.equal(rec.finals(r.localId), 1);
      }
    });

    test(
      'bad-spec',
      'a spec that escapes the session directory or is malformed is rejected before anything runs',
      async (t) => {
        const { b } = await setup(t);
        const cases: Partial<BatchJobSpec>[] = [
          { stdout: '../escape.txt' },
          { stdin: '/etc/passwd' },
          { sessionDir: 'relative/dir' },
          { environment: [{ name: 'NOT VALID', value: 'x' }] },
          { slots: 0 },
          { limits: { wallTimeSeconds: -1 } },
        ];
        for (const patch of cases) {
          const s = await spec(patch);
          await assert.rejects(
            b.submit(s),
            (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_BAD_SPEC',
            JSON.stringify(patch),
          );
        }
        assert.equal(existsSync(join(root, 'escape.txt')), false);
      },
    );

    test('closed', 'a closed backend refuses new work', async (t) => {
      const { b } = await setup(t);
      await b.close();
      await assert.rejects(b.submit(await spec()), (e: unknown) => isCeError(e) && e.code === 'CE_ERR_LRMS_CLOSED');
    });
  });
}
