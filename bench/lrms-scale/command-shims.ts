/**
 * A directory of counting shims for a batch system's commands, given to the backend as its
 * `binDir`: each shim runs the real command under GNU time, which appends one line per run
 * (`name wall user system`, in seconds) to a log the benchmark reads. So the count of
 * status commands per poll interval and their cost are seen from outside the backend, not
 * from its own bookkeeping. The submission command is linked, not wrapped: the shim's own
 * fork and exec (a few ms) would otherwise be counted in the submission rate.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CommandRun {
  readonly command: string;
  readonly wallS: number;
  readonly cpuS: number;
}

const TIME = '/usr/bin/time';

/** The real command's path (the shims must not find themselves): in `dir`, or on PATH. */
function real(command: string, dir: string): string {
  if (dir !== '') return join(dir, command);
  return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim();
}

export class CommandShims {
  readonly dir: string;
  readonly #log: string;

  /** `wrapped`: the commands counted and timed; `linked`: passed through untouched; `realDir`: where they are ('': PATH). */
  constructor(root: string, wrapped: readonly string[], linked: readonly string[], realDir = '') {
    this.dir = join(root, 'bin');
    this.#log = join(root, 'commands.log');
    mkdirSync(this.dir, { recursive: true });
    writeFileSync(this.#log, '');
    for (const c of wrapped) {
      const path = join(this.dir, c);
      writeFileSync(
        path,
        `#!/bin/sh\nexec ${TIME} -a -o '${this.#log}' -f '${c} %e %U %S' '${real(c, realDir)}' "$@"\n`,
      );
      chmodSync(path, 0o755);
    }
    for (const c of linked) symlinkSync(real(c, realDir), join(this.dir, c));
  }

  /** Where the log ends now: `since(mark)` reads the runs after it. */
  mark(): number {
    return statSync(this.#log).size;
  }

  since(mark: number): CommandRun[] {
    const text = readFileSync(this.#log).subarray(mark).toString('utf8');
    const runs: CommandRun[] = [];
    for (const line of text.split('\n')) {
      // GNU time prints "Command exited with non-zero status N" before its line on a failure.
      const m = /^(\S+) ([\d.]+) ([\d.]+) ([\d.]+)$/.exec(line);
      if (m) runs.push({ command: m[1] as string, wallS: Number(m[2]), cpuS: Number(m[3]) + Number(m[4]) });
    }
    return runs;
  }
}
