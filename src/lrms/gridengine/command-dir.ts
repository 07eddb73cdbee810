/**
 * Where the Grid Engine commands run from when `binDir` is not configured. Grid Engine
 * keeps them in `$SGE_ROOT/bin/<arch>` (the arch named by `$SGE_ROOT/util/arch`), the
 * directory its own settings.sh puts on PATH. Debian's packages put a shell wrapper on
 * PATH instead (/usr/bin/qsub, qstat, ... → gridengine-wrapper), which runs util/arch, a
 * script of a dozen processes, at every call: on the shared 2-core test machine 141 ms per
 * qsub through it against 25 ms direct, and 229 against 44 ms per qstat, so that the
 * wrapper, not the qmaster, bounded submissions (docs/performance.md, "Batch systems at
 * scale"). So the arch is asked once, at start, and the commands run from that directory;
 * where there is none (no SGE_ROOT, no util/arch, no qsub and qstat there), from PATH as
 * before. A configured `binDir` is used as it is.
 */
import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { join } from 'node:path';

/** util/arch prints a name such as `lx-amd64`: anything else (a path, nothing) is not used. */
const ARCH = /^[A-Za-z0-9][\w.-]{0,63}$/;

function arch(sgeRoot: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      join(sgeRoot, 'util', 'arch'),
      [],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C', SGE_ROOT: sgeRoot }, timeout: timeoutMs },
      (error, stdout) => {
        const name = String(stdout).trim();
        resolve(!error && ARCH.test(name) ? name : undefined);
      },
    );
  });
}

/** The directory of the commands: `binDir` if set, else `$SGE_ROOT/bin/<arch>` if it holds them, else '' (PATH). */
export async function geCommandDir(binDir: string, sgeRoot: string, timeoutMs = 10_000): Promise<string> {
  if (binDir !== '') return binDir;
  const root = sgeRoot || process.env.SGE_ROOT || '';
  if (root === '') return '';
  const name = await arch(root, timeoutMs);
  if (name === undefined) return '';
  const dir = join(root, 'bin', name);
  const runnable = (tool: string): Promise<boolean> =>
    access(join(dir, tool), constants.X_OK).then(
      () => true,
      () => false,
    );
  return (await runnable('qsub')) && (await runnable('qstat')) ? dir : '';
}
