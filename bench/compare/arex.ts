/**
 * The reference A-REX for a comparison: used when it answers at its endpoint; with
 * --with-arex it is required, and started with the anchor's setup script (on the
 * endpoint's port) when it does not answer yet.
 *
 * A-REX 6 runs as two arched daemons: the HTTPS/REST front end and the job manager.
 * Both hold the service's state, so both count for memory and CPU; their pid files
 * are where the setup script's init scripts write them.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { BenchError } from '../harness/failures.js';

export const AREX_PID_FILES = ['/run/arched-arex-ws.pid', '/run/arched-arex.pid'] as const;

/** Live pids from A-REX's pid files (empty when not readable). */
export async function arexPids(): Promise<number[]> {
  const out: number[] = [];
  for (const f of AREX_PID_FILES) {
    const t = await readFile(f, 'utf8').catch(() => '');
    const pid = Number(t.trim());
    if (Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`)) out.push(pid);
  }
  return out;
}

/** Runs the setup script with AREX_PORT set; its output goes to our stderr. */
export function runArexSetup(script: string, port: number): Promise<void> {
  if (!existsSync(script)) return Promise.reject(new BenchError('usage', `A-REX setup script not found: ${script}`));
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, AREX_PORT: String(port) },
    });
    child.once('error', (e) => reject(new BenchError('usage', `cannot run ${script}: ${e.message}`)));
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new BenchError('usage', `${script} failed (exit ${code}); see its output above`)),
    );
  });
}
