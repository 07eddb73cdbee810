// Through the real service: a job that starts daemons and kills its own wrapper leaves
// no process once it has ended, and cleaning a job kills whatever of it still runs.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobMark } from '../../src/lrms/fork/job-processes.js';
import {
  Client,
  processAlive,
  removeDir,
  startCeres,
  stopCeres,
  tempDir,
  type RunningCeres,
} from '../helpers/service.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

function pidsIn(dir: string, names: readonly string[]): number[] {
  return names.map((n) => {
    try {
      return Number(readFileSync(join(dir, n), 'utf8').trim()) || 0;
    } catch {
      return 0;
    }
  });
}

async function until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a job's processes through the service", () => {
  let dir = '';
  let ceres: RunningCeres;
  let c: Client;
  const seen: number[] = [];
  before(async () => {
    dir = tempDir('job-procs');
    ceres = await startCeres({ stateDir: join(dir, 'state') });
    c = Client.forUser(ceres);
  });
  after(async () => {
    for (const p of seen) if (processAlive(p)) process.kill(p, 'SIGKILL');
    await c.close();
    await stopCeres(ceres);
    removeDir(dir);
  });

  const attemptDir = (id: string): string => {
    const jobDir = join(ceres.stateDir, 'lrms', 'jobs', id.slice(0, 2), id);
    return join(jobDir, readdirSync(jobDir)[0] as string);
  };

  it('daemons of a job that killed its wrapper are gone when the job has ended', async () => {
    // The job may run as an unprivileged account (a root service runs jobs as `nobody`):
    // it writes its daemons' pids into a folder every account may write. Such a job cannot
    // kill its wrapper (root's); its daemons must still be gone when it has ended.
    const pidDir = join(dir, 'pids');
    mkdirSync(pidDir, { mode: 0o1777 });
    chmodSync(pidDir, 0o1777);
    const out = join(pidDir, 'daemons');
    const script = join(dir, 'daemonize.sh');
    writeFileSync(
      script,
      [
        '#!/bin/sh',
        `setsid sh -c 'echo $$ > ${out}.1; exec sleep 1000' &`,
        `sh -c '( sh -c "echo \\$\\$ > ${out}.2; exec sleep 1000" & )'`,
        `nohup sh -c 'echo $$ > ${out}.3; exec sleep 1000' >/dev/null 2>&1 &`,
        `while [ ! -s ${out}.1 ] || [ ! -s ${out}.2 ] || [ ! -s ${out}.3 ]; do sleep 0.02; done`,
        'kill -9 $PPID',
        '',
      ].join('\n'),
    );
    chmodSync(script, 0o755);
    const [job] = await c.submit(`&(executable="${script}")`);
    const id = job.id as string;
    const st = await c.waitFor([id], FINAL, 60_000);
    assert.ok(FINAL.includes(st.get(id) ?? ''), `job ended: ${st.get(id)}`);
    const pids = pidsIn(pidDir, ['daemons.1', 'daemons.2', 'daemons.3']);
    seen.push(...pids);
    assert.ok(
      pids.every((p) => p > 0),
      'the daemons started',
    );
    assert.deepEqual(pids.filter(processAlive), [], 'no daemon outlives the job');
  });

  it('cleaning a job kills a process of it that still runs', async () => {
    const [job] = await c.submit('&(executable="/bin/true")');
    const id = job.id as string;
    await c.waitFor([id], FINAL, 60_000);
    // A straggler with the job's mark, as if it had escaped everything else.
    const straggler = spawn('sleep', ['1000'], {
      detached: true,
      stdio: 'ignore',
      env: { PATH: process.env.PATH, CERES_JOB_MARK: jobMark(attemptDir(id)) },
    });
    straggler.unref();
    const pid = straggler.pid as number;
    seen.push(pid);
    await until('the straggler to run', () => processAlive(pid));
    const [r] = await c.action('clean', [id]);
    assert.equal(String(r['status-code']), '202', JSON.stringify(r));
    await until('the straggler to be killed by the clean', () => !processAlive(pid));
  });
});
