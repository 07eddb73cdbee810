// scripts/slurm-dev.sh on a real Slurm: start is quick and idempotent, status tells, stop
// ends every daemon by its pid, and a second stop is harmless. With accounting, MariaDB
// and slurmdbd start and stop with it, and sacct answers.
import { describe, it, after } from 'node:test';
import { createServer } from 'node:net';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SLURM_DEV, slurmMissing, slurmPort, slurmSkip } from './slurm-fixture.js';
import { until } from '../helpers/poll.js';

/** A process that ended and waits for its parent to collect it. */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

const skip = slurmSkip();

describe('scripts/slurm-dev.sh', { ...(skip !== undefined ? { skip } : {}) }, () => {
  let dir = '';
  // Above the default 20000 and 300 s: the start writes what these say.
  const env = {
    ...process.env,
    SLURM_DEV_PORT: slurmPort(),
    SLURM_DEV_MAX_JOB_COUNT: '25000',
    SLURM_DEV_MIN_JOB_AGE: '600',
  };
  // A bound far past the script's own 30 s: a start that hangs fails here, not the whole run.
  const run = (action: string): { code: number | null; out: string } => {
    const r = spawnSync(SLURM_DEV, [action, dir], { env, encoding: 'utf8', timeout: 90_000 });
    return { code: r.status, out: `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}` };
  };
  const pids = (): number[] =>
    ['munged', 'slurmctld', 'slurmd'].map((n) => Number(readFileSync(join(dir, `${n}.pid`), 'utf8').trim()));
  const alive = (pid: number): boolean => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  after(async () => {
    if (dir === '') return;
    run('stop');
    await rm(dir, { recursive: true, force: true });
  });

  it('start, start again, status, stop, stop again', async () => {
    dir = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-'));
    const t0 = Date.now();
    const first = run('start');
    const took = Date.now() - t0;
    assert.equal(first.code, 0, first.out);
    assert.equal(first.out.trim(), `export SLURM_CONF=${join(dir, 'slurm.conf')}`);
    assert.ok(took < 15_000, `start took ${took} ms`);
    const running = pids();
    assert.ok(running.every(alive));
    const conf = readFileSync(join(dir, 'slurm.conf'), 'utf8');
    assert.match(conf, /^PartitionName=debug .*Default=YES MaxTime=60 /m);
    assert.match(conf, /^PartitionName=long .*MaxTime=INFINITE /m);
    assert.equal(conf.match(/^PartitionName=/gm)?.length, 2, 'no partition but the two');
    assert.match(conf, /^MaxJobCount=25000$/m);
    assert.match(conf, /^MinJobAge=600$/m);
    const sinfo = spawnSync('sinfo', ['-h', '-o', '%P %t'], {
      env: { ...env, SLURM_CONF: join(dir, 'slurm.conf') },
      encoding: 'utf8',
    });
    assert.match(sinfo.stdout, /^debug\* idle$/m);

    const again = run('start');
    assert.equal(again.code, 0, again.out);
    assert.deepEqual(pids(), running, 'a second start keeps the running daemons');

    const status = run('status');
    assert.equal(status.code, 0);
    assert.match(status.out, /slurmctld: running/);

    assert.equal(run('stop').code, 0);
    assert.deepEqual(running.filter(alive), [], 'every daemon is gone');
    const down = run('status');
    assert.equal(down.code, 1);
    assert.match(down.out, /munged: stopped\nslurmctld: stopped\nslurmd: stopped/);
    assert.equal(run('stop').code, 0, 'stopping a stopped cluster is harmless');
  });

  it('stop ends a job step whose slurmd was killed (it would wait for that slurmd for ever)', async () => {
    if (dir === '') dir = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-'));
    assert.equal(run('start').code, 0);
    const slurmEnv = { ...env, SLURM_CONF: join(dir, 'slurm.conf') };
    // Run from the cluster's directory: without -o, Slurm writes slurm-<id>.out into the job's
    // working directory, which is sbatch's (the test runner's would be the repository).
    const sb = spawnSync('sbatch', ['--parsable', '--wrap', 'sleep 300'], {
      env: slurmEnv,
      encoding: 'utf8',
      cwd: dir,
    });
    assert.equal(sb.status, 0, sb.stderr);
    const output = join(dir, `slurm-${sb.stdout.trim()}.out`);
    const steps = (): number[] =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .map(Number)
        .filter((pid) => {
          try {
            return (
              readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'slurmstepd' &&
              readlinkSync(`/proc/${pid}/cwd`).startsWith(dir)
            );
          } catch {
            return false;
          }
        });
    await until(() => steps().length > 0, 'the job step to start', 30_000);
    await until(() => existsSync(output), `the job's output file in the cluster's directory (${output})`, 30_000);
    const [, , slurmd] = pids();
    process.kill(slurmd as number, 'SIGKILL');
    assert.equal(run('stop').code, 0);
    await until(() => steps().every((pid) => !alive(pid) || isZombie(pid)), 'the job step to end', 10_000);
  });

  it('a controller that cannot bind its port fails the start within seconds, saying why, and leaves nothing running', async () => {
    const taken = slurmPort();
    const blocker = createServer();
    await new Promise<void>((resolve, reject) => {
      blocker.once('error', reject);
      blocker.listen(Number(taken), '0.0.0.0', resolve);
    });
    const own = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-'));
    try {
      const t0 = Date.now();
      const r = spawnSync(SLURM_DEV, ['start', own], {
        env: { ...process.env, SLURM_DEV_PORT: taken },
        encoding: 'utf8',
        timeout: 90_000,
      });
      const took = Date.now() - t0;
      assert.equal(r.status, 1, `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}`);
      assert.match(r.stderr, /slurmctld exited|within 30 s/);
      assert.match(r.stderr, /Address already in use/, 'the controller log tells why');
      assert.ok(took < 45_000, `the start gave up after ${took} ms`);
      const status = spawnSync(SLURM_DEV, ['status', own], { encoding: 'utf8' });
      assert.match(status.stdout, /munged: stopped\nslurmctld: stopped\nslurmd: stopped/);
    } finally {
      blocker.close();
      spawnSync(SLURM_DEV, ['stop', own]);
      await rm(own, { recursive: true, force: true });
    }
  });

  it('the switches: SLURM_DEV_MAX_JOB_COUNT, SLURM_DEV_EXTRA_PARTITIONS and SLURM_DEV_CPUS reach the running controller', async () => {
    const own = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-'));
    const swEnv = {
      ...process.env,
      SLURM_DEV_PORT: slurmPort(),
      SLURM_DEV_MAX_JOB_COUNT: '60000',
      SLURM_DEV_EXTRA_PARTITIONS: 'short mc',
      SLURM_DEV_CPUS: '96',
    };
    try {
      const r = spawnSync(SLURM_DEV, ['start', own], { env: swEnv, encoding: 'utf8', timeout: 90_000 });
      assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
      const slurmEnv = { ...swEnv, SLURM_CONF: join(own, 'slurm.conf') };
      const ask = (tool: string, args: string[]): string =>
        spawnSync(tool, args, { env: slurmEnv, encoding: 'utf8' }).stdout;
      assert.match(ask('scontrol', ['show', 'config']), /^MaxJobCount\s+=\s+60000$/m);
      assert.deepEqual(ask('sinfo', ['-h', '-o', '%R']).trim().split('\n').sort(), ['debug', 'long', 'mc', 'short']);
      assert.match(ask('scontrol', ['show', 'node']), /CPUTot=96\b/, 'config_overrides: more CPUs than the host has');
    } finally {
      spawnSync(SLURM_DEV, ['stop', own], { env: swEnv });
      await rm(own, { recursive: true, force: true });
    }
  });

  const accountingSkip = slurmMissing(true);
  it(
    'with SLURM_DEV_ACCOUNTING=1 MariaDB and slurmdbd start too: sacct answers; stop ends all five daemons',
    { ...(accountingSkip !== undefined && process.env.CERES_REQUIRE_SLURM !== '1' ? { skip: accountingSkip } : {}) },
    async () => {
      const own = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-'));
      const accEnv = { ...process.env, SLURM_DEV_PORT: slurmPort(), SLURM_DEV_ACCOUNTING: '1' };
      const names = ['munged', 'mariadbd', 'slurmdbd', 'slurmctld', 'slurmd'];
      try {
        const r = spawnSync(SLURM_DEV, ['start', own], { env: accEnv, encoding: 'utf8', timeout: 120_000 });
        assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
        const running = names.map((n) => Number(readFileSync(join(own, `${n}.pid`), 'utf8').trim()));
        assert.ok(running.every(alive), String(running));
        assert.match(
          readFileSync(join(own, 'slurm.conf'), 'utf8'),
          /^AccountingStorageType=accounting_storage\/slurmdbd$/m,
        );
        // The database password is in slurmdbd.conf alone, which only its owner reads.
        assert.equal(statSync(join(own, 'slurmdbd.conf')).mode & 0o777, 0o600);
        const slurmEnv = { ...accEnv, SLURM_CONF: join(own, 'slurm.conf') };
        const sb = spawnSync('sbatch', ['--parsable', '-o', '/dev/null', '--wrap', 'exit 3'], {
          env: slurmEnv,
          encoding: 'utf8',
        });
        assert.equal(sb.status, 0, sb.stderr);
        const id = sb.stdout.trim();
        await until(
          () =>
            spawnSync('sacct', ['-n', '-P', '-X', `--jobs=${id}`, '--format=State,ExitCode'], {
              env: slurmEnv,
              encoding: 'utf8',
            }).stdout.trim() === 'FAILED|3:0',
          'accounting to record the job',
          60_000,
        );
        const status = spawnSync(SLURM_DEV, ['status', own], { env: accEnv, encoding: 'utf8' });
        assert.equal(status.status, 0, status.stdout);
        assert.match(status.stdout, /mariadbd: running.*\nslurmdbd: running/s);
        assert.equal(spawnSync(SLURM_DEV, ['stop', own], { env: accEnv }).status, 0);
        assert.deepEqual(running.filter(alive), [], 'every daemon is gone');
      } finally {
        spawnSync(SLURM_DEV, ['stop', own], { env: accEnv });
        await rm(own, { recursive: true, force: true });
      }
    },
  );

  it(
    'with accounting, a database that cannot bind its port fails the start within seconds, saying why, and leaves nothing running',
    { ...(accountingSkip !== undefined && process.env.CERES_REQUIRE_SLURM !== '1' ? { skip: accountingSkip } : {}) },
    async () => {
      const port = slurmPort();
      const blocker = createServer();
      await new Promise<void>((resolve, reject) => {
        blocker.once('error', reject);
        blocker.listen(Number(port) + 3, '127.0.0.1', resolve);
      });
      const own = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-'));
      const accEnv = { ...process.env, SLURM_DEV_PORT: port, SLURM_DEV_ACCOUNTING: '1' };
      try {
        const t0 = Date.now();
        const r = spawnSync(SLURM_DEV, ['start', own], { env: accEnv, encoding: 'utf8', timeout: 120_000 });
        const took = Date.now() - t0;
        assert.equal(r.status, 1, `${r.stdout}${r.stderr}`);
        assert.match(r.stderr, /mariadbd exited/);
        assert.match(r.stderr, /Address already in use/, "the database's log tells why");
        assert.ok(took < 30_000, `the start gave up after ${took} ms`);
        const status = spawnSync(SLURM_DEV, ['status', own], { env: accEnv, encoding: 'utf8' });
        assert.doesNotMatch(status.stdout, /running/);
      } finally {
        blocker.close();
        spawnSync(SLURM_DEV, ['stop', own], { env: accEnv });
        await rm(own, { recursive: true, force: true });
      }
    },
  );

  it('refuses a SLURM_DEV_MAX_JOB_COUNT or SLURM_DEV_MIN_JOB_AGE that is no whole number above 0, before starting anything', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'ceres-slurm-dev-bad-'));
    try {
      for (const [name, value] of [
        ['SLURM_DEV_MAX_JOB_COUNT', 'lots'],
        ['SLURM_DEV_MAX_JOB_COUNT', '0'],
        ['SLURM_DEV_MAX_JOB_COUNT', '2e4'],
        ['SLURM_DEV_MIN_JOB_AGE', '-1'],
        ['SLURM_DEV_MIN_JOB_AGE', '300\nMaxJobCount=1'],
      ] as const) {
        const r = spawnSync(SLURM_DEV, ['start', empty], { env: { ...process.env, [name]: value }, encoding: 'utf8' });
        assert.equal(r.status, 2, `${name}=${value}`);
        assert.match(r.stderr, new RegExp(`${name} must be a whole number above 0`));
        assert.ok(!existsSync(join(empty, 'slurm.conf')), 'nothing written');
      }
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it('refuses a bad command line', () => {
    const r = spawnSync(SLURM_DEV, ['restart'], { encoding: 'utf8' });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /usage:/);
  });
});
