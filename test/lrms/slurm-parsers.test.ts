// The Slurm backend's pure parts and its command runner, without a Slurm: squeue and
// scontrol parsing (including garbage), state mapping, sbatch options, the batch script,
// and how failing, erroring and hanging commands are retried or given up on (real child
// processes standing in for the Slurm tools).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseIdComment, parseSqueue, pendingReason } from '../../src/lrms/slurm/squeue.js';
import {
  expandHostList,
  isUnknownJob,
  parseKeyValues,
  parseScontrolJob,
  slurmDuration,
} from '../../src/lrms/slurm/scontrol.js';
import { batchState, finalReason } from '../../src/lrms/slurm/slurm-state.js';
import { attemptTag, sbatchArgs, slurmSpecProblem, timeLimitMinutes } from '../../src/lrms/slurm/sbatch-options.js';
import { batchScript, wrapperArgs } from '../../src/lrms/slurm/batch-script.js';
import { WRAPPER_C_SOURCE } from '../../src/lrms/core/wrapper-c.js';
import { WRAPPER_SH_SOURCE } from '../../src/lrms/core/wrapper-sh.js';
import { parseJobId } from '../../src/lrms/slurm/lrms-files.js';
import { SlurmCommandError, SlurmRunner, isTransient, slurmMessage } from '../../src/lrms/slurm/run-command.js';
import { resultFromSlurm } from '../../src/lrms/slurm/job-result.js';
import { clusterInfo, limitSeconds, parseNodes, parsePartitions } from '../../src/lrms/slurm/sinfo.js';
import { parseSacct, sacctBytes, sacctSeconds } from '../../src/lrms/slurm/sacct.js';
import type { BatchJobSpec } from '../../src/lrms/backend.js';

const spec = (patch: Partial<BatchJobSpec> = {}): BatchJobSpec => ({
  jobId: 'abc123',
  sessionDir: '/srv/sessions/abc123',
  lrmsDir: '/srv/lrms/ab/abc123/r0',
  executable: '/bin/echo',
  arguments: ['hi'],
  environment: [],
  runtimeEnvironments: [],
  limits: {},
  slots: 1,
  ...patch,
});
const settings = { jobNamePrefix: 'ceres-', defaultPartition: '', killGraceSeconds: 10, extraArgs: [] as string[] };

describe('squeue output', () => {
  it('parses every job line, names with | included', () => {
    const q = parseSqueue(
      '12|RUNNING|None|debug|root|ceres-a\n13|PENDING|Priority|long|alice|odd|name\n14_2|PENDING|JobHeldUser|debug|bob|x\n',
    );
    assert.deepEqual([...q.jobs.keys()], ['12', '13', '14_2']);
    assert.equal(q.jobs.get('13')?.name, 'odd|name');
    assert.equal(q.jobs.get('13')?.partition, 'long');
    assert.deepEqual(q.bad, []);
  });
  it('reports garbage lines without failing on the good ones', () => {
    const q = parseSqueue(
      'squeue: error: something\n\n12|RUNNING|None|debug|root|n\nnot|a|job\nabc|RUNNING|None|p|u|n\n15|running lower|x|p|u|n\n',
    );
    assert.deepEqual([...q.jobs.keys()], ['12']);
    assert.equal(q.bad.length, 4);
  });
  it('a pending reason is passed on as Slurm gives it; None, control characters and length are not', () => {
    assert.equal(pendingReason('Resources'), 'Resources');
    assert.equal(pendingReason('QOSMaxJobsPerUserLimit'), 'QOSMaxJobsPerUserLimit');
    assert.equal(pendingReason('None'), undefined);
    assert.equal(pendingReason(' '), undefined);
    assert.equal(pendingReason('ReqNodeNotAvail,_Reserved\u001b[31m'), 'ReqNodeNotAvail,_Reserved[31m');
    assert.equal(pendingReason('x'.repeat(500)), `${'x'.repeat(120)}...`);
  });
  it('an empty answer is an empty queue', () => {
    assert.equal(parseSqueue('').jobs.size, 0);
    assert.equal(parseSqueue('\n\n').bad.length, 0);
  });
  it('id|comment lines for reconciliation', () => {
    assert.deepEqual(parseIdComment('5|ceres:a:1\n6|\nx|y\n\n'), [
      { id: '5', comment: 'ceres:a:1' },
      { id: '6', comment: '' },
    ]);
  });
});

describe('Slurm states', () => {
  it('maps running, queued, held and exiting states', () => {
    assert.equal(batchState('PENDING', 'Priority'), 'QUEUING');
    assert.equal(batchState('PENDING', 'Resources'), 'QUEUING');
    assert.equal(batchState('PENDING', 'JobHeldUser'), 'HELD');
    assert.equal(batchState('PENDING', 'JobHeldAdmin'), 'HELD');
    assert.equal(batchState('SUSPENDED', 'None'), 'HELD');
    assert.equal(batchState('RUNNING', 'None'), 'RUNNING');
    assert.equal(batchState('COMPLETING', 'None'), 'EXITINGLRMS');
    assert.equal(batchState('SOMETHING_NEW', 'None'), 'OTHER');
    assert.equal(batchState('COMPLETED', 'None'), undefined);
    assert.equal(batchState('CANCELLED', 'None'), undefined);
  });
  it('names why Slurm ended a job the wrapper could not report', () => {
    assert.equal(finalReason('CANCELLED', 'None'), 'cancelled');
    assert.equal(finalReason('TIMEOUT', 'None'), 'wall time limit exceeded');
    assert.equal(finalReason('OUT_OF_MEMORY', 'None'), 'memory limit exceeded');
    assert.match(finalReason('NODE_FAIL', 'NodeDown') ?? '', /^job lost: node failure \(NodeDown\)$/);
    assert.equal(finalReason('COMPLETED', 'None'), undefined);
  });
});

describe('scontrol show job -o', () => {
  const line =
    'JobId=7 JobName=ceres-x UserId=root(0) GroupId=root(0) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) ExitCode=3:0 RunTime=00:01:02 TimeLimit=01:00:00 StartTime=2026-11-25T03:32:01 EndTime=2026-11-25T03:33:03 NodeList=n[01-03,07] BatchHost=n01 Command=/srv/lrms/with space/slurm.sh WorkDir=/srv/s p Comment=ceres:a:b';
  it('reads state, exit code, times and nodes; values may hold spaces', () => {
    const r = parseScontrolJob(`${line}\n`);
    assert.ok(r);
    assert.equal(r.state, 'FAILED');
    assert.equal(r.exitCode, 3);
    assert.equal(r.signal, 0);
    assert.equal(r.runSeconds, 62);
    assert.deepEqual(r.nodes, ['n01', 'n02', 'n03', 'n07']);
    assert.equal(r.fields.get('Command'), '/srv/lrms/with space/slurm.sh');
    assert.equal(r.fields.get('WorkDir'), '/srv/s p');
    assert.ok(r.start && r.end && r.end.getTime() - r.start.getTime() === 62_000);
  });
  it('a signal becomes 128+n and its name', () => {
    const r = parseScontrolJob(
      'JobId=8 JobState=CANCELLED Reason=None ExitCode=0:15 RunTime=00:00:05 StartTime=Unknown EndTime=None NodeList=(null)',
    );
    assert.ok(r);
    const res = resultFromSlurm(r, '');
    assert.equal(res.exitCode, 143);
    assert.equal(res.signal, 'SIGTERM');
    assert.equal(res.failureReason, 'cancelled');
    assert.equal(res.startTime, null);
    assert.deepEqual(res.nodes, []);
  });
  it('a job that ended without the wrapper is lost, with what Slurm said', () => {
    const r = parseScontrolJob('JobId=9 JobState=COMPLETED Reason=None ExitCode=0:0');
    assert.ok(r);
    assert.match(
      resultFromSlurm(r, 'error cannot claim the job directory').failureReason ?? '',
      /^job lost: .*COMPLETED.*cannot claim/,
    );
  });
  it('garbage and unknown jobs', () => {
    assert.equal(parseScontrolJob(''), undefined);
    assert.equal(parseScontrolJob('slurm_load_jobs error: Invalid job id specified'), undefined);
    assert.equal(parseScontrolJob('JobId=1 Reason=None'), undefined, 'no JobState');
    assert.ok(isUnknownJob('scontrol: slurm_load_jobs error: Invalid job id specified'));
    assert.equal(parseScontrolJob('JobId=1 JobState=RUNNING ExitCode=garbage')?.exitCode, null);
    assert.equal(parseKeyValues('=x a=1').get('a'), '1');
  });
  it('durations and host lists', () => {
    assert.equal(slurmDuration('1-02:03:04'), 93784);
    assert.equal(slurmDuration('05:06'), 306);
    assert.equal(slurmDuration('INVALID'), 0);
    assert.deepEqual(expandHostList('a,b[1-2],c[08-09]x'), ['a', 'b1', 'b2', 'c08x', 'c09x']);
    assert.deepEqual(expandHostList('(null)'), []);
  });
});

describe('sbatch options', () => {
  it('carries the job id in the name and the attempt in the comment; partition, time, memory, tasks', () => {
    const args = sbatchArgs(
      spec({ queue: 'long', slots: 4, limits: { wallTimeSeconds: 90, memoryBytes: 1.5 * 1024 ** 3 } }),
      settings,
    );
    assert.ok(args.includes('--parsable'));
    assert.ok(args.includes('--job-name=ceres-abc123'));
    assert.ok(args.includes(`--comment=${attemptTag(spec())}`));
    assert.ok(args.includes('--partition=long'));
    assert.ok(args.includes('--ntasks=4'));
    assert.ok(args.includes('--time=3'), args.join(' ')); // 90 s + 10 s grace + 60 s margin → 3 min
    assert.ok(args.includes('--mem-per-cpu=384M'), 'memory per slot: --mem would be per node');
    assert.ok(args.includes('--chdir=/srv/sessions/abc123'));
    assert.ok(args.includes('--export=ALL'));
  });
  it('slots per node and exclusive hosts', () => {
    const args = sbatchArgs(spec({ slots: 6, slotsPerNode: 2, exclusive: true }), settings);
    assert.ok(args.includes('--ntasks=6'));
    assert.ok(args.includes('--ntasks-per-node=2'));
    assert.ok(args.includes('--nodes=3'));
    assert.ok(args.includes('--exclusive'));
    assert.ok(!sbatchArgs(spec(), settings).some((a) => /^--(nodes|ntasks-per-node|exclusive)/.test(a)));
    assert.equal(
      slurmSpecProblem(spec({ slots: 6, slotsPerNode: 4 })),
      'slots per node (4) must be a positive integer dividing the slots (6)',
    );
    assert.ok(slurmSpecProblem(spec({ slots: 2, slotsPerNode: 0 })));
    assert.equal(slurmSpecProblem(spec({ slots: 4, slotsPerNode: 2 })), undefined);
  });
  it('no queue: the configured default partition, or none; no limits: no --time or --mem', () => {
    assert.ok(!sbatchArgs(spec(), settings).some((a) => /^--(partition|time|mem)=/.test(a)));
    assert.ok(sbatchArgs(spec(), { ...settings, defaultPartition: 'grid' }).includes('--partition=grid'));
  });
  it('CPU time without wall time bounds the time limit per slot', () => {
    assert.equal(timeLimitMinutes({ limits: { cpuTimeSeconds: 3600 }, slots: 2 }, 0), 31);
    assert.equal(timeLimitMinutes({ limits: {}, slots: 1 }, 10), undefined);
  });
  it('attempt tags differ between attempts of the same job', () => {
    assert.notEqual(attemptTag(spec()), attemptTag(spec({ lrmsDir: '/srv/lrms/ab/abc123/r1' })));
  });
  it('site options come last', () => {
    assert.deepEqual(sbatchArgs(spec(), { ...settings, extraArgs: ['--account=grid'] }).at(-1), '--account=grid');
  });
});

describe('batch script', () => {
  it("passes the wrapper exactly the arguments its usage line names (the fork backend's wrappers)", () => {
    const want = Number(/if \(argc != (\d+)\)/.exec(WRAPPER_C_SOURCE)?.[1]) - 1;
    assert.ok(want > 0);
    assert.equal(wrapperArgs(spec(), { jobPath: '/bin', killGraceSeconds: 1, sampleIntervalMs: 100 }).length, want);
    assert.match(WRAPPER_SH_SOURCE, new RegExp(`\\[ \\$# -eq ${want} \\]`));
  });

  it('records the Slurm job id and execs the wrapper with quoted arguments', () => {
    const text = batchScript(spec({ sessionDir: "/srv/it's here", stdout: 'out', stderr: 'out' }), {
      jobPath: '/usr/bin:/bin',
      killGraceSeconds: 5,
      sampleIntervalMs: 500,
    });
    assert.match(text, /^#!\/bin\/sh\n/);
    assert.match(text, /PATH='\/usr\/bin:\/bin'; export PATH/);
    assert.match(text, /slurm-job' \] \|\| printf '%s\\n' "\$SLURM_JOB_ID"/);
    assert.match(
      text,
      /exec '\/srv\/lrms\/ab\/abc123\/r0\/wrapper' '\/srv\/lrms\/ab\/abc123\/r0' '\/srv\/it'\\''s here' '' 'out' '' '1' /,
    );
    // The script is valid sh.
    execFileSync('sh', ['-n'], { input: text });
  });
});

describe('sbatch answers', () => {
  it('takes a job id, with or without a cluster', () => {
    assert.equal(parseJobId('123\n'), '123');
    assert.equal(parseJobId('123;ceres\n'), '123');
    assert.equal(parseJobId(''), undefined);
    assert.equal(parseJobId('Submitted batch job 5'), undefined);
    assert.equal(parseJobId('sbatch: error: x'), undefined);
  });
});

describe('command runner', () => {
  let bin = '';
  before(async () => {
    bin = await mkdtemp(join(tmpdir(), 'ceres-slurm-bin-'));
    const tool = async (name: string, body: string): Promise<void> => {
      await writeFile(join(bin, name), `#!/bin/sh\n${body}\n`);
      await chmod(join(bin, name), 0o755);
    };
    await tool('ok', 'echo "conf=$SLURM_CONF args=$*"');
    await tool('envdump', 'env');
    await tool(
      'down',
      `n=$(cat "${bin}/count" 2>/dev/null || echo 0); echo $((n + 1)) > "${bin}/count"; echo "down: error: Unable to contact slurm controller (connect failure)" >&2; exit 1`,
    );
    await tool(
      'bad',
      'echo "sbatch: error: invalid partition specified: nope" >&2; echo "sbatch: error: Batch job submission failed: Invalid partition name specified" >&2; exit 1',
    );
    await tool('hang', `echo x >> "${bin}/hangs"; exec sleep 60`);
  });
  after(() => rm(bin, { recursive: true, force: true }));
  const runner = (attempts = 3, timeoutMs = 5000): SlurmRunner =>
    new SlurmRunner({ binDir: bin, slurmConf: '/etc/x.conf', timeoutMs, attempts, backoffMs: 20, maxConcurrent: 2 });

  it('passes SLURM_CONF and arguments, no shell', async () => {
    const r = await runner().run('ok', ['a b', '$HOME']);
    assert.equal(r.stdout, 'conf=/etc/x.conf args=a b $HOME\n');
  });
  it("keeps the service's environment away from Slurm commands (sbatch passes its own to the job)", async () => {
    process.env.CERES_TEST_LEAK = 'secret';
    try {
      const { stdout } = await runner().run('envdump', []);
      assert.doesNotMatch(stdout, /CERES_TEST_LEAK/);
      assert.match(stdout, /^SLURM_CONF=\/etc\/x\.conf$/m);
      assert.match(stdout, /^PATH=/m);
    } finally {
      delete process.env.CERES_TEST_LEAK;
    }
  });
  it("retries a transient failure, then gives up with Slurm's message", async () => {
    await assert.rejects(
      runner(3).run('down', []),
      (e: unknown) =>
        e instanceof SlurmCommandError && e.transient && /Unable to contact slurm controller/.test(e.message),
    );
    assert.equal((await readFile(join(bin, 'count'), 'utf8')).trim(), '3');
  });
  it('does not retry a permanent error', async () => {
    await assert.rejects(
      runner(5).run('bad', []),
      (e: unknown) =>
        e instanceof SlurmCommandError &&
        !e.transient &&
        e.message === 'bad: Batch job submission failed: Invalid partition name specified',
    );
  });
  it('kills a hanging command at its timeout and retries it', async () => {
    const t0 = Date.now();
    await assert.rejects(
      runner(2, 300).run('hang', []),
      (e: unknown) => e instanceof SlurmCommandError && e.timedOut && e.transient,
    );
    assert.ok(Date.now() - t0 < 5000);
    assert.equal((await readFile(join(bin, 'hangs'), 'utf8')).trim().split('\n').length, 2);
  });
  it('a command withdrawn (its signal fired) while it waits for a slot never runs; the others do', async () => {
    const r = new SlurmRunner({
      binDir: bin,
      slurmConf: '',
      timeoutMs: 5000,
      attempts: 1,
      backoffMs: 20,
      maxConcurrent: 1,
    });
    const ac = new AbortController();
    const reason = new Error('killed');
    let started = 0;
    const busy = r.run('ok', ['first']);
    const queued = r.run('ok', ['second'], { signal: ac.signal, starting: async () => void started++ });
    const third = r.run('ok', ['third']);
    ac.abort(reason);
    await assert.rejects(queued, (e: unknown) => e === reason);
    assert.match((await busy).stdout, /args=first/);
    assert.match((await third).stdout, /args=third/);
    assert.equal(started, 0, 'the withdrawn command was not started');
    // Fired before the call: refused at once, nothing run.
    await assert.rejects(r.run('ok', ['x'], { signal: ac.signal }), (e: unknown) => e === reason);
  });
  it('a command already started runs to its end when its signal fires', async () => {
    const ac = new AbortController();
    let started = 0;
    const run = runner().run('ok', ['started'], { signal: ac.signal, starting: async () => void started++ });
    await new Promise((res) => setTimeout(res, 0));
    ac.abort(new Error('too late'));
    assert.match((await run).stdout, /args=started/);
    assert.equal(started, 1);
  });
  it('a missing tool is a permanent error', async () => {
    await assert.rejects(
      runner().run('no-such-tool', []),
      (e: unknown) => e instanceof SlurmCommandError && !e.transient && /not installed/.test(e.message),
    );
  });
  it('classifies messages', () => {
    assert.ok(isTransient('sbatch: error: Batch job submission failed: Socket timed out on send/recv operation'));
    assert.ok(!isTransient('sbatch: error: Batch job submission failed: Requested time limit is invalid'));
    assert.equal(slurmMessage('a: error: one\nb: error: two\n\n'), 'two');
  });
});

describe('sinfo output', () => {
  it('partitions with limits and CPUs, merged when sinfo splits one; nodes counted once', () => {
    const parts = parsePartitions(
      'debug|up|1:00:00|n/a|2/6/0/8\nlong|up|infinite|30:00|1/3/0/4\nlong|up|infinite|30:00|0/4/0/4\ndown|down|2-00:00:00|n/a|0/0/4/4\ngarbage\n|up|1|n/a|0/0/0/0\n',
    );
    assert.deepEqual(
      parts.map((p) => p.name),
      ['debug', 'long', 'down'],
    );
    assert.equal(parts[0]?.maxWallTimeSeconds, 3600);
    assert.equal(parts[1]?.maxWallTimeSeconds, undefined);
    assert.equal(parts[1]?.defaultWallTimeSeconds, 1800);
    assert.equal(parts[1]?.total, 8);
    assert.equal(parts[1]?.idle, 7);
    assert.equal(parts[2]?.up, false);
    assert.equal(parts[2]?.maxWallTimeSeconds, 172800);
    const nodes = parseNodes('n1|2/6/0/8\nn1|2/6/0/8\nn2|0/4/0/4\nbad line\n');
    assert.deepEqual(nodes, { nodes: 2, total: 12, idle: 10 });
    const q = parseSqueue('1|RUNNING|None|debug|u|a\n2|PENDING|Priority|debug,long|u|b\n3|COMPLETED|None|debug|u|c\n');
    const info = clusterInfo(parts, nodes, q);
    assert.deepEqual(
      info.queues.map((x) => [x.name, x.runningJobs, x.waitingJobs]),
      [
        ['debug', 1, 1],
        ['long', 0, 1],
        ['down', 0, 0],
      ],
    );
    assert.equal(info.totalSlots, 12);
    assert.equal(limitSeconds('45'), 2700);
    assert.equal(limitSeconds('n/a'), undefined);
  });
});

describe('sacct output (what accounting in slurmdbd recorded)', () => {
  it('the allocation line gives state, exit code, times and CPU; the steps the largest resident set', () => {
    const r = parseSacct(
      '77|FAILED|3:0|00:01:02|2026-11-25T03:32:01|2026-11-25T03:33:03|n[1-2]||01:02.500|00:03.250\n' +
        '77.batch|FAILED|3:0|00:01:02|2026-11-25T03:32:01|2026-11-25T03:33:03|n1|2048K|01:00.000|00:03.000\n' +
        '77.extern|COMPLETED|0:0|00:01:02|2026-11-25T03:32:01|2026-11-25T03:33:03|n1|1.5M|00:02.500|00:00.250\n',
    );
    assert.ok(r);
    assert.equal(r.state, 'FAILED');
    assert.equal(r.exitCode, 3);
    assert.equal(r.runSeconds, 62);
    assert.deepEqual(r.nodes, ['n1', 'n2']);
    assert.equal(r.maxRssBytes, 2048 * 1024);
    assert.equal(r.userCpuSeconds, 62.5);
    assert.equal(r.systemCpuSeconds, 3.25);
    assert.equal(r.batchStep, true);
    const lost = resultFromSlurm(r, '');
    assert.equal(lost.failureReason?.startsWith('job lost: '), true, 'no status file: the reason says so');
    assert.equal(lost.cpuTimeSeconds, 65.75, "accounting's CPU time");
    assert.deepEqual(lost.jobReported, ['exitCode'], "the batch script's exit code is the job account's word");
  });
  it('"CANCELLED by 0" is CANCELLED; a job not yet over has no batch step; no step sampled: no memory figure', () => {
    const c = parseSacct(
      '9|CANCELLED by 0|0:15|00:00:01|2026-11-25T03:32:01|2026-11-25T03:32:02|vm||00:00:00|00:00:00\n',
    );
    assert.ok(c);
    assert.equal(c.state, 'CANCELLED');
    assert.equal(c.signal, 15);
    assert.equal(c.maxRssBytes, undefined);
    assert.equal(c.batchStep, false);
    assert.deepEqual(resultFromSlurm(c, '').jobReported, undefined, "the signal is Slurm's own observation");
  });
  it('garbage, other field counts and empty answers are nothing; odd times are no time', () => {
    assert.equal(parseSacct(''), undefined);
    assert.equal(parseSacct('Slurm accounting storage is disabled\n'), undefined);
    assert.equal(parseSacct('1|lower case|0:0|x|y|z|n||1|1\n'), undefined);
    assert.equal(parseSacct('1|FAILED|3:0|00:01:02|x|y|n|\n'), undefined, 'the old seven-field form');
    assert.equal(parseSacct('x.batch|FAILED|0:0|00:00:01|x|y|n||1:00|1:00\n'), undefined, 'no allocation line first');
    assert.equal(parseSacct('5|FAILED|0:0|00:00:01|x|y|n||junk|\n')?.userCpuSeconds, undefined);
    assert.equal(sacctSeconds('1-02:03:04'), 93784);
    assert.equal(sacctSeconds('03:04.5'), 184.5);
    assert.equal(sacctSeconds('12'), undefined);
    assert.equal(sacctBytes('12K'), 12288);
    assert.equal(sacctBytes(''), 0);
    assert.equal(sacctBytes('junk'), 0);
  });
});
