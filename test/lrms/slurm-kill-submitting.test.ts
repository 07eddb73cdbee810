// A kill that comes while the job's batch submission is under way (docs/lifecycle.md,
// "Kill"): on a real Slurm whose sbatch is held until the test lets it answer. A job whose
// sbatch had not started when the kill came is never submitted; a job whose sbatch runs is
// cancelled the moment sbatch answers. Either ends KILLED promptly and runs at most once,
// also when the service is killed with `kill -9` in between. Before, the kill waited for the
// submission to be answered, then for the job's turn in the engine, then for a scancel
// queued behind the other jobs' sbatch calls: over 120 s with a slow sbatch.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Client,
  jobWritableFile,
  killProcessesUnder,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
  type RunningCeres,
} from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

const skip = slurmSkip();
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];

describe('a kill while the batch submission is slow (real Slurm)', { ...(skip !== undefined ? { skip } : {}) }, () => {
  if (skip !== undefined) return;
  const slurm = useSlurm();
  let ceres: RunningCeres | undefined;
  let client: Client;
  let work = '';
  let sbatchLog = '';
  let gate = '';
  let ledger = '';
  let config: Record<string, unknown> = {};
  const all: string[] = [];

  /** The service on the file's state directory (again after a crash). */
  const start = async (): Promise<void> => {
    ceres = await startCeres({ stateDir: join(work, 'state'), config });
    client = Client.forUser(ceres);
  };
  before(async () => {
    work = tempDir('slurm-kill-submitting');
    // The Slurm tools as they are, but each sbatch call logs its job name, then waits until
    // the test opens the gate (a controller that is slow to answer), bounded so that a
    // failing test cannot leave it waiting for ever.
    const bin = join(work, 'bin');
    sbatchLog = jobWritableFile(join(work, 'sbatch.log'));
    gate = join(work, 'gate');
    mkdirSync(bin);
    for (const tool of ['squeue', 'scancel', 'scontrol', 'sinfo', 'sacct', 'sacctmgr'])
      symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
    writeFileSync(
      join(bin, 'sbatch'),
      `#!/bin/sh\nfor a in "$@"; do case $a in --job-name=*) echo "\${a#--job-name=}" >> ${sbatchLog};; esac; done\n` +
        `i=0; while [ ! -e ${gate} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done\n` +
        'exec /usr/bin/sbatch "$@"\n',
    );
    chmodSync(join(bin, 'sbatch'), 0o755);
    ledger = jobWritableFile(join(work, 'ledger'));
    config = {
      cluster: { queues: [{ name: 'debug' }] },
      // The cancel timeout far above every wait below: a job must end by Slurm's answer.
      engine: { maxRunningJobsPerUser: 0, cancelTimeoutSeconds: 3600 },
      lrms: {
        backend: 'slurm',
        slurm: {
          slurmConf: slurm.conf,
          binDir: bin,
          // One command at a time: a second job handed over waits for the first one's sbatch.
          maxConcurrentCommands: 1,
          commandTimeoutMs: 120_000,
          pollIntervalMs: 500,
          killGraceSeconds: 2,
          extraSbatchArgs: ['--mem-per-cpu=1'],
        },
      },
    };
    await start();
  });
  after(async () => {
    writeFileSync(gate, '');
    if (all.length > 0 && client) await client.action('kill', all).catch(() => undefined);
    await client?.close();
    if (ceres) await stopCeres(ceres);
    if (work) killProcessesUnder(work);
    if (work) removeDir(work);
  });

  /** Job names in the order sbatch was called. */
  const calls = (): string[] => readFileSync(sbatchLog, 'utf8').split('\n').filter(Boolean);
  const sbatchOf = (id: string): number => calls().filter((name) => name.endsWith(id)).length;
  /** How often each job's executable ran (its mark in the ledger). */
  const marks = new Map<string, string>();
  const runs = (id: string): number =>
    readFileSync(ledger, 'utf8')
      .split('\n')
      .filter((l) => l === marks.get(id)).length;
  /** Jobs that write their mark to the ledger, then sleep for ten minutes. */
  const submit = async (n: number): Promise<string[]> => {
    const mark = (i: number): string => `m${all.length + i}`;
    const descs = Array.from(
      { length: n },
      (_, i) => `(&(executable="/bin/sh")(arguments="-c" "echo ${mark(i)} >> ${ledger}; sleep 600"))`,
    );
    const ids = (await client.submit(`+${descs.join('')}`)).map((j) => j.id as string);
    ids.forEach((id, i) => marks.set(id, mark(i)));
    all.push(...ids);
    return ids;
  };
  /** The Slurm jobs of the file's cluster (job names), ended ones too while Slurm remembers them. */
  const slurmJobs = (): string[] => slurm.cmd('squeue', ['-h', '-o', '%j']).split('\n').filter(Boolean);

  it('a kill while sbatch runs: cancelled once sbatch answers; a job not yet handed to sbatch is never submitted', async () => {
    const t0 = Date.now();
    const ids = await submit(3);
    // The first job's sbatch runs (held at the gate); the second waits for the one command slot.
    await untilValue('the first sbatch', async () => (calls().length > 0 ? true : undefined), 120_000);
    const r = await client.action('kill', ids);
    assert.deepEqual(
      r.map((j) => String(j['status-code'])),
      ['202', '202', '202'],
    );
    writeFileSync(gate, '');
    const states = await client.waitFor(ids, ENDED, 100_000);
    const took = Date.now() - t0;
    assert.deepEqual(
      [...states.values()],
      ['KILLED', 'KILLED', 'KILLED'],
      `ended as ${JSON.stringify([...states])} after ${took} ms`,
    );
    // Only the job whose sbatch was under way reached Slurm, once; it was cancelled there.
    const [first, ...rest] = ids.map(sbatchOf);
    assert.ok(first! + rest.reduce((a, b) => a + b, 0) <= 1, `sbatch calls ${JSON.stringify(calls())}`);
    for (const id of ids) assert.ok(runs(id) <= 1);
    await untilValue('Slurm to hold none of them', async () =>
      slurmJobs().some((name) => ids.some((id) => name.endsWith(id))) ? undefined : true,
    );
  });

  it('a kill -9 of the service after the kill, its sbatch answered meanwhile: found, cancelled, never run twice', async () => {
    rmSync(gate, { force: true });
    const ids = await submit(3);
    // Whichever job's sbatch came first (not necessarily the first submitted), held at the gate.
    const first = await untilValue('the first sbatch', async () => ids.find((id) => sbatchOf(id) > 0), 120_000);
    const r = await client.action('kill', ids);
    assert.deepEqual(
      r.map((j) => String(j['status-code'])),
      ['202', '202', '202'],
    );
    // The kills are stored (answered 202); the service dies before it acted on any of them
    // but the one it held back, and its sbatch answers while it is down (an answer lost).
    await stopCeres(ceres!, 'SIGKILL');
    await client.close();
    writeFileSync(gate, '');
    await untilValue('the lost submission in Slurm', async () =>
      slurmJobs().some((name) => name.endsWith(first)) ? true : undefined,
    );
    await start();
    const states = await client.waitFor(ids, ENDED, 100_000);
    assert.deepEqual([...states.values()], ['KILLED', 'KILLED', 'KILLED'], JSON.stringify([...states]));
    // The lost submission was found by its mark, not made again; the others never reached sbatch.
    assert.deepEqual(
      ids.map(sbatchOf),
      ids.map((id) => (id === first ? 1 : 0)),
      `sbatch calls ${JSON.stringify(calls())}`,
    );
    for (const id of ids) assert.ok(runs(id) <= 1, `${id} ran ${runs(id)} times`);
    await untilValue('Slurm to hold none of them', async () =>
      slurmJobs().some((name) => ids.some((id) => name.endsWith(id))) ? undefined : true,
    );
  });

  it('a kill -9 while killed jobs wait for their sbatch turn: after the restart they are never submitted', async () => {
    rmSync(gate, { force: true });
    const ids = await submit(3);
    // Whichever job's sbatch came first (the engine need not hand them over in submission
    // order: under load the second one's stage-in may end first), held at the gate.
    const first = await untilValue('the first sbatch', async () => ids.find((id) => sbatchOf(id) > 0), 120_000);
    // Only the jobs behind it are killed: one waits for the one command slot, the other is held.
    const rest = ids.filter((id) => id !== first);
    await client.action('kill', rest);
    await stopCeres(ceres!, 'SIGKILL');
    await client.close();
    writeFileSync(gate, '');
    await start();
    const states = await client.waitFor(rest, ENDED, 100_000);
    assert.deepEqual([...states.values()], ['KILLED', 'KILLED'], JSON.stringify([...states]));
    assert.deepEqual(rest.map(sbatchOf), [0, 0], `sbatch calls ${JSON.stringify(calls())}`);
    // The first job, not killed, runs once.
    await untilValue('the first job to run', async () => (runs(first) === 1 ? true : undefined), 100_000);
    await client.action('kill', [first]);
    assert.deepEqual([...(await client.waitFor([first], ENDED, 100_000)).values()], ['KILLED']);
    assert.equal(runs(first), 1);
  });
});
