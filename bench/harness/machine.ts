/**
 * Where a run happened: CPU model, cores, memory, kernel, Node version, and the git
 * commit of the tree being measured (with "-dirty" when it has uncommitted changes),
 * so every figure in bench/results/ can be traced.
 */
import { execFile } from 'node:child_process';
import { cpus, release, totalmem, type as osType } from 'node:os';
import { promisify } from 'node:util';
import type { MachineInfo } from './results.js';

const run = promisify(execFile);

export function machineInfo(): MachineInfo {
  const c = cpus();
  return {
    cpu: (c[0]?.model ?? 'unknown CPU').replace(/\s+/g, ' ').trim(),
    cores: c.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    kernel: release(),
    node: process.version,
    os: osType(),
  };
}

/** Short commit of the working tree, "-dirty" if it differs from it; "unknown" outside git. */
export async function gitCommit(cwd = process.cwd()): Promise<string> {
  try {
    const { stdout } = await run('git', ['rev-parse', '--short', 'HEAD'], { cwd });
    const commit = stdout.trim();
    const { stdout: st } = await run('git', ['status', '--porcelain', '--untracked-files=no'], { cwd });
    return st.trim() === '' ? commit : `${commit}-dirty`;
  } catch {
    return 'unknown';
  }
}

/** YYYY-MM-DD in UTC. */
export function isoDate(d = new Date()): string {
  return d.toISOString().slice(0, 10);
}
