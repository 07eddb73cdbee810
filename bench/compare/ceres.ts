/**
 * Starts the Ceres under test from this build (`src/cli/main.js serve`) on a free
 * loopback port with a fresh state directory, and reads the two lines it prints when
 * ready: "service URL <url>" and "PKI folder <dir>" (the folder holds the development
 * CA and a user proxy). Its output goes to a log file, not through a pipe, so the
 * harness spends no CPU reading the service's access log during a measurement.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchError } from '../harness/failures.js';
import { ceresCommand } from '../harness/launcher.js';

export interface CeresInstance {
  readonly url: string;
  readonly pkiDir: string;
  readonly pid: number;
  readonly logPath: string;
  stop(): Promise<void>;
}

/** The two readiness lines of `ceres serve`; undefined until both are there. */
export function parseServeOutput(text: string): { url: string; pkiDir: string } | undefined {
  const url = /service URL (https?:\/\/\S+)/.exec(text)?.[1];
  const pki = /PKI folder (.+?)\s*$/m.exec(text)?.[1];
  return url !== undefined && pki !== undefined ? { url, pkiDir: pki } : undefined;
}

function tail(text: string, lines = 8): string {
  return text.trim().split('\n').slice(-lines).join('\n');
}

/**
 * The configuration of a Ceres under test when none is given (docs/performance.md): the
 * per-user limits lifted, the active and running jobs and the connections and requests in
 * progress per identity (the 64 clients of concurrent-submit and mixed-load are one user,
 * and the default of 32 requests in progress answered half of them 429).
 */
export const BENCH_DEFAULTS = {
  jobs: { maxActiveJobsPerUser: 0 },
  engine: { maxRunningJobsPerUser: 0 },
  http: { maxConnectionsPerIdentity: 1024, maxRequestsPerIdentity: 1024 },
} as const;

export async function startCeres(configFile: string | undefined, timeoutS = 60): Promise<CeresInstance> {
  let ceres: ReturnType<typeof ceresCommand>;
  try {
    ceres = ceresCommand();
  } catch (e) {
    throw new BenchError('usage', (e as Error).message);
  }
  const root = await mkdtemp(join(tmpdir(), 'ceres-bench-'));
  const logPath = join(root, 'ceres.log');
  const log = await open(logPath, 'a');
  // As `npm start` runs it (docs/operations.md: its flags, and jemalloc where installed).
  const args = [...ceres.args, 'serve', '--listen', '127.0.0.1:0', '--state-dir', join(root, 'state')];
  // Without a configuration of its own, the per-user limits that protect a shared host are
  // lifted: A-REX has none by default, and the benchmark's one user drives thousands of jobs.
  const config = configFile ?? join(root, 'bench-config.json');
  if (configFile === undefined) await writeFile(config, JSON.stringify(BENCH_DEFAULTS));
  args.push('--config', config);
  const child = spawn(ceres.file, args, { stdio: ['ignore', log.fd, log.fd] });
  await log.close();
  // Set by the exit listener: the cast keeps TypeScript from narrowing it to null for good.
  let exited = null as number | string | null;
  child.once('exit', (code, signal) => (exited = code ?? signal));

  const stop = async (): Promise<void> => {
    if (exited === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await gone;
      clearTimeout(t);
    }
    await rm(root, { recursive: true, force: true });
  };

  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    const text = await readFile(logPath, 'utf8').catch(() => '');
    const ready = parseServeOutput(text);
    if (ready) return { ...ready, pid: child.pid ?? 0, logPath, stop };
    if (exited !== null) {
      const out = tail(text);
      await stop();
      throw new BenchError('unreachable', `Ceres exited (${exited}) before it was ready:\n${out}`);
    }
    if (Date.now() > deadline) {
      const out = tail(text);
      await stop();
      throw new BenchError('unreachable', `Ceres did not print its service URL within ${timeoutS} s:\n${out}`);
    }
    await sleep(100);
  }
}
