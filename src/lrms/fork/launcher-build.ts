/**
 * Provides the fork backend's launcher: the C launcher compiled once per source version
 * (core/wrapper-build.ts's `compileOnce`), or the Node launcher when asked for or when no
 * compiler works.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ceError } from '../../errors/ce-error.js';
import { compileOnce } from '../core/wrapper-build.js';
import { LAUNCHER_C_SOURCE } from './launcher-c.js';
import type { LauncherProgram } from './launcher-client.js';

export type LauncherKind = LauncherProgram['kind'];

/**
 * The launcher to use. `auto`: the C launcher if it compiles, else the Node one
 * (`onFallback` says why); `c`: C or a CE_ERR_LRMS_UNAVAILABLE error; `node`: the Node one.
 */
export async function ensureLauncher(
  workDir: string,
  mode: 'auto' | LauncherKind,
  compiler: string,
  onFallback?: (why: string) => void,
): Promise<LauncherProgram> {
  if (mode === 'node') return { kind: 'node' };
  const binDir = join(workDir, 'bin');
  await mkdir(binDir, { recursive: true });
  try {
    return { kind: 'c', path: await compileOnce(binDir, 'launcher', LAUNCHER_C_SOURCE, compiler) };
  } catch (e) {
    const why = e instanceof Error ? (e.message.split('\n')[0] ?? e.message) : String(e);
    if (mode === 'c') throw ceError('CE_ERR_LRMS_UNAVAILABLE', 'The C launcher could not be compiled', { cause: e });
    onFallback?.(why);
    return { kind: 'node' };
  }
}
