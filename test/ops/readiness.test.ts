// Readiness checks with real parts: a real SQLite store that is closed, a real fork
// backend that is closed, a check that never answers; the disk watch on a path that
// cannot be examined; the marks' units; the transition observer's timing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { ForkBackend } from '../../src/lrms/fork/fork-backend.js';
import { evaluate, storeCheck } from '../../src/health/readiness.js';
import { readyBody } from '../../src/health/answers.js';
import { DiskWatch, lowSpaceReason, lowWaterBytes } from '../../src/health/disk-space.js';
import { CeresMetrics } from '../../src/metrics/registry.js';
import { TransitionObserver } from '../../src/metrics/jobs.js';
import { execFileSync } from 'node:child_process';
import { removeDir, tempDir } from '../helpers/service.js';

describe('readiness', () => {
  it('the store check passes on an open database and fails once it is closed', async () => {
    const dir = tempDir('ready-db');
    try {
      const db = openDatabase(join(dir, 'ceres.db'));
      assert.deepEqual(await evaluate([storeCheck(db)]), { ready: true, checks: [{ name: 'store', ok: true }] });
      db.close();
      const r = await evaluate([storeCheck(db)]);
      assert.equal(r.ready, false);
      assert.equal(r.checks[0]?.ok, false);
      assert.match(r.checks[0]?.reason ?? '', /not open/);
    } finally {
      removeDir(dir);
    }
  });

  it('a closed fork backend is not usable; an open one is', async () => {
    const dir = tempDir('ready-fork');
    try {
      const b = await ForkBackend.create({ workDir: join(dir, 'fork'), wrapper: 'sh' });
      assert.equal(await b.usable(), undefined);
      await b.close();
      assert.equal(await b.usable(), 'fork backend closed');
    } finally {
      removeDir(dir);
    }
  });

  it('a check that hangs or throws fails the probe instead of hanging it', async () => {
    const t0 = Date.now();
    const r = await evaluate([
      { name: 'hangs', check: () => new Promise<undefined>(() => undefined) },
      {
        name: 'throws',
        check: () => {
          throw new Error('boom');
        },
      },
      { name: 'fine', check: () => undefined },
    ]);
    assert.ok(Date.now() - t0 < 5000);
    assert.equal(r.ready, false);
    assert.deepEqual(
      r.checks.map((c) => [c.name, c.ok]),
      [
        ['hangs', false],
        ['throws', false],
        ['fine', true],
      ],
    );
    assert.match(r.checks[0]?.reason ?? '', /no answer within/);
    assert.equal(r.checks[1]?.reason, 'boom');
  });

  it('an advisory check that fails is a warning with its reason, on both ports, and leaves the verdict alone', async () => {
    const crls = { name: 'crls', advisory: true as const, check: () => 'the CRL of /CN=X CA expired at 2026-01-01' };
    const ready = await evaluate([{ name: 'fine', check: () => undefined }, crls]);
    assert.equal(ready.ready, true);
    const pub = readyBody(ready, false);
    assert.equal(pub.status, 200);
    assert.deepEqual(JSON.parse(pub.body), {
      status: 'ready',
      warnings: [{ name: 'crls', reason: 'the CRL of /CN=X CA expired at 2026-01-01' }],
    });
    const detailed = JSON.parse(readyBody(ready, true).body);
    assert.deepEqual(detailed.warnings, [{ name: 'crls', reason: 'the CRL of /CN=X CA expired at 2026-01-01' }]);
    assert.equal(detailed.checks[1].advisory, true);
    // Not ready for another reason: the failing list names only that one, the warning stays a warning.
    const notReady = await evaluate([{ name: 'disk', check: () => 'sessions below its low-water mark' }, crls]);
    assert.equal(notReady.ready, false);
    const body = readyBody(notReady, false);
    assert.equal(body.status, 503);
    assert.deepEqual(JSON.parse(body.body), {
      status: 'not ready',
      failing: ['disk'],
      warnings: [{ name: 'crls', reason: 'the CRL of /CN=X CA expired at 2026-01-01' }],
    });
    // A passing advisory check adds nothing to the answer.
    const quiet = await evaluate([{ ...crls, check: () => undefined }]);
    assert.deepEqual(JSON.parse(readyBody(quiet, false).body), { status: 'ready' });
  });
});

describe('disk watch', () => {
  it('marks: bytes as given, percentages of the file system, 0 is off', () => {
    assert.equal(lowWaterBytes(1234, 1e9), 1234);
    assert.equal(lowWaterBytes('5%', 1000), 50);
    assert.equal(lowWaterBytes('0.5%', 1000), 5);
    assert.equal(lowWaterBytes(0, 1000), 0);
  });

  it('a file system that cannot be examined counts as low, with the reason', () => {
    const changes: string[] = [];
    const w = new DiskWatch({
      paths: { sessions: '/nonexistent/ceres-sessions', state: '/' },
      marks: () => ({ sessions: '1%', state: 0 }),
      intervalMs: () => 1000,
      onChange: (s) => changes.push(`${s.area}:${s.low}`),
    });
    assert.deepEqual(
      w.low().map((s) => s.area),
      ['sessions'],
    );
    assert.equal(w.low()[0]?.error, 'ENOENT');
    assert.match(lowSpaceReason(w.low()), /sessions file system cannot be examined \(ENOENT\)/);
    assert.deepEqual(changes, ['sessions:true']);
  });

  it('a mark above the free space is low; lowering it (a reload) recovers at the next check', () => {
    let mark: number | string = '100%';
    const changes: string[] = [];
    const w = new DiskWatch({
      paths: { sessions: '/', state: '/' },
      marks: () => ({ sessions: mark, state: 0 }),
      intervalMs: () => 1000,
      onChange: (s) => changes.push(`${s.area}:${s.low}`),
    });
    assert.deepEqual(
      w.low().map((s) => s.area),
      ['sessions'],
    );
    mark = 1;
    w.check();
    assert.deepEqual(w.low(), []);
    assert.deepEqual(changes, ['sessions:true', 'sessions:false']);
  });
});

/** The sum of the time-in-state histogram for `state`, in seconds (undefined: never observed). */
async function stateSecondsSum(m: CeresMetrics, state: string): Promise<number | undefined> {
  const h = (await m.registry.getSingleMetric('ceres_job_state_duration_seconds')!.get()).values;
  return h.find(
    (v) =>
      (v as { metricName?: string }).metricName === 'ceres_job_state_duration_seconds_sum' && v.labels.state === state,
  )?.value;
}

describe('transition observer', () => {
  it('times a state from the entry time given with the transition, and skips one whose entry is not known', async () => {
    const m = new CeresMetrics();
    let now = 10_000;
    const o = new TransitionObserver(m, () => now);
    o.seen({ id: 'j', from: 'ACCEPTED', to: 'PREPARING', final: false, enteredAt: 4_000 });
    now += 2_500;
    o.seen({ id: 'j', from: 'PREPARING', to: 'FINISHED', final: true, enteredAt: 10_000 });
    // A job stored before entry times were, resumed after a restart: its entry is not known.
    o.seen({ id: 'k', from: 'INLRMS', to: 'FINISHING', final: false, enteredAt: undefined });
    assert.equal(await stateSecondsSum(m, 'ACCEPTED'), 6);
    assert.equal(await stateSecondsSum(m, 'PREPARING'), 2.5);
    assert.equal(await stateSecondsSum(m, 'INLRMS'), undefined);
    assert.match(await m.text(), /ceres_job_transitions_total\{from="INLRMS",to="FINISHING"\} 1/);
  });

  it('times a state entered 30 days after the start to the millisecond', async () => {
    const DAY = 86_400_000;
    const m = new CeresMetrics();
    const start = Date.parse('2026-01-01T00:00:00Z');
    let now = start + 30 * DAY + 7_373;
    const o = new TransitionObserver(m, () => now);
    o.seen({ id: 'j', from: 'INLRMS', to: 'FINISHED', final: true, enteredAt: start + 30 * DAY + 123 });
    assert.equal(await stateSecondsSum(m, 'INLRMS'), 7.25);
    now = start; // a clock stepped back: never a negative stay
    o.seen({ id: 'k', from: 'QUEUING', to: 'FINISHED', final: true, enteredAt: start + 1_000 });
    assert.equal(await stateSecondsSum(m, 'QUEUING'), 0);
  });

  it('keeps nothing per job: 100,000 jobs in progress leave its memory as it was', () => {
    // Measured in a process of its own: in this one, the earlier tests' garbage and timers
    // moved the heap by more than the 3.7 MB being looked for. An entry per job in
    // progress measured 37 bytes; what is left (0-4) is the JIT's code for the loop.
    const script = `
      const { TransitionObserver } = await import(${JSON.stringify(new URL('../../src/metrics/jobs.js', import.meta.url).href)});
      const { NO_METRICS } = await import(${JSON.stringify(new URL('../../src/metrics/instruments.js', import.meta.url).href)});
      const collect = () => { for (let i = 0; i < 4; i++) gc(); };
      const o = new TransitionObserver(NO_METRICS, () => 5000);
      const seen = Array.from({ length: 100000 }, (_, i) =>
        ({ id: 'job-' + i, from: 'ACCEPTED', to: 'PREPARING', final: false, enteredAt: 1000 }));
      collect();
      const before = process.memoryUsage().heapUsed;
      for (const t of seen) o.seen(t);
      collect();
      // o and seen are used after the collection: what o keeps is still reachable.
      console.log(JSON.stringify({ perJob: (process.memoryUsage().heapUsed - before) / seen.length, n: seen.length, o: typeof o.seen }));
    `;
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const r = JSON.parse(out) as { perJob: number; n: number; o: string };
    assert.equal(r.n, 100_000);
    assert.ok(r.perJob < 10, `${r.perJob.toFixed(1)} bytes per job`);
  });
});

describe('batch command observer', () => {
  it('times commands and counts the failing ones by backend and command', async () => {
    const { batchCommandObserver } = await import('../../src/metrics/batch.js');
    const { timedCommand } = await import('../../src/lrms/core/command-observer.js');
    const m = new CeresMetrics();
    const o = batchCommandObserver(m, 'slurm');
    assert.equal(await timedCommand(o, 'squeue', async () => 'ok'), 'ok');
    await assert.rejects(
      timedCommand(o, 'sbatch', async () => {
        throw new Error('sbatch: error: invalid partition');
      }),
      /invalid partition/,
    );
    const text = await m.text();
    assert.match(text, /ceres_batch_command_duration_seconds_count\{backend="slurm",command="squeue"\} 1/);
    assert.match(text, /ceres_batch_command_duration_seconds_count\{backend="slurm",command="sbatch"\} 1/);
    assert.match(text, /ceres_batch_command_errors_total\{backend="slurm",command="sbatch"\} 1/);
    assert.doesNotMatch(text, /ceres_batch_command_errors_total\{backend="slurm",command="squeue"\}/);
  });
});

describe('Slurm commands reach the observer', () => {
  it('every run of a Slurm tool is reported under its name, a failing one as an error', async () => {
    const { SlurmRunner } = await import('../../src/lrms/slurm/run-command.js');
    const { batchCommandObserver } = await import('../../src/metrics/batch.js');
    const m = new CeresMetrics();
    // No Slurm here: a bin directory without the tools makes every command fail at once.
    const runner = new SlurmRunner({
      binDir: '/nonexistent-slurm-bin',
      slurmConf: '',
      timeoutMs: 5000,
      attempts: 1,
      backoffMs: 10,
      maxConcurrent: 2,
      commands: batchCommandObserver(m, 'slurm'),
    });
    await assert.rejects(runner.run('squeue', ['--me']), /not installed/);
    const text = await m.text();
    assert.match(text, /ceres_batch_command_duration_seconds_count\{backend="slurm",command="squeue"\} 1/);
    assert.match(text, /ceres_batch_command_errors_total\{backend="slurm",command="squeue"\} 1/);
  });
});

describe('the timed backend', () => {
  it('passes through what it does not time (cluster information, health), and times the rest', async () => {
    const { timedBackend, batchCommandObserver } = await import('../../src/metrics/batch.js');
    const dir = tempDir('timed-fork');
    try {
      const b = await ForkBackend.create({ workDir: join(dir, 'fork'), wrapper: 'sh' });
      const m = new CeresMetrics();
      const t = timedBackend(b, batchCommandObserver(m, 'fork'));
      assert.equal(t.name, 'fork');
      assert.equal(await t.usable?.(), undefined);
      await t.recover([]);
      assert.equal(await t.cancel('no-such-job'), false);
      await t.close();
      assert.equal(await t.usable?.(), 'fork backend closed');
      const text = await m.text();
      assert.match(text, /ceres_batch_command_duration_seconds_count\{backend="fork",command="recover"\} 1/);
      assert.match(text, /ceres_batch_command_duration_seconds_count\{backend="fork",command="cancel"\} 1/);
    } finally {
      removeDir(dir);
    }
  });
});

describe('what a reload may change', () => {
  it('queues and limits are applied; authorization, mapping, listeners and other keys are kept and named', async () => {
    const { LiveConfig } = await import('../../src/service/live-config.js');
    const { buildConfig } = await import('../../src/config/load.js');
    const live = new LiveConfig(buildConfig({ cluster: { queues: [{ name: 'a' }] }, engine: { maxRunningJobs: 4 } }));
    const plan = live.plan(
      buildConfig({
        cluster: { queues: [{ name: 'a' }, { name: 'b' }], name: 'renamed' },
        engine: { maxRunningJobs: 8 },
        listen: '127.0.0.1:9999',
        mapping: [{ group: 'all', pool: { accounts: ['pool001'] } }],
        authorization: { groups: [{ name: 'all', match: [{ subject: '/CN=x' }] }], allow: ['all'] },
      }),
    );
    assert.deepEqual([...plan.applied].sort(), ['cluster.queues', 'engine.maxRunningJobs']);
    assert.ok(
      plan.ignored.includes('listen') &&
        plan.ignored.includes('cluster.name') &&
        plan.ignored.includes('mapping') &&
        plan.ignored.some((k) => k.startsWith('authorization')),
    );
    live.apply(plan);
    assert.deepEqual(
      live.view.cluster.queues.map((q) => q.name),
      ['a', 'b'],
    );
    assert.equal(live.view.engine.maxRunningJobs, 8);
    assert.equal(live.view.listen, '127.0.0.1:8443');
    assert.equal(live.view.cluster.name, live.current.cluster.name);
    assert.notEqual(live.view.cluster.name, 'renamed');
    assert.equal(live.view.authorization, undefined);
    assert.ok(Object.isFrozen(live.view.cluster.queues));
  });

  it('new queues naming groups of an authorization section that is not running are found inconsistent (the reload is refused)', async () => {
    const { LiveConfig } = await import('../../src/service/live-config.js');
    const { buildConfig } = await import('../../src/config/load.js');
    const { checkAuthorizationConfig } = await import('../../src/config/authorization-check.js');
    const live = new LiveConfig(buildConfig({ cluster: { queues: [{ name: 'a' }] } }));
    const plan = live.plan(
      buildConfig({
        authorization: { groups: [{ name: 'g', match: [{ subject: '/CN=x' }] }], allow: ['g'] },
        cluster: { queues: [{ name: 'a', allow: ['g'] }] },
      }),
    );
    assert.equal(checkAuthorizationConfig(live.current), undefined);
    assert.match(checkAuthorizationConfig(plan.merged)?.key ?? '', /^cluster\.queues\.0\.allow/);
  });
});
