// Runs the real `ceres` command as a child process (admin, accounting) for the tests.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  json(): any;
}

export function ceresCli(args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      { env, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code =
          err === null ? 0 : typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1;
        resolve({ code, stdout, stderr, json: () => JSON.parse(stdout) });
      },
    );
  });
}

/** `ceres admin <args> --state-dir DIR`. */
export function admin(stateDir: string, ...args: string[]): Promise<CliResult> {
  return ceresCli(['admin', '--state-dir', stateDir, ...args]);
}
