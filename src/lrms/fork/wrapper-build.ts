/**
 * Provides the job wrapper executable: the C wrapper compiled with the system compiler
 * into `<workDir>/bin/` (once per source version: the file name carries a hash of the
 * source), or the POSIX sh wrapper when asked for or when no compiler works.
 * Compiling is the one process the backend starts from the service itself, once.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { writeFileAtomic } from '../../fs/atomic-write.js';
import { constants } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ceError } from '../../errors/ce-error.js';
import { WRAPPER_C_SOURCE } from './wrapper-c.js';
import { WRAPPER_SH_SOURCE } from './wrapper-sh.js';

export type WrapperKind = 'c' | 'sh';

export interface WrapperBinary {
  readonly kind: WrapperKind;
  readonly path: string;
}

const run = promisify(execFile);

function hashOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

async function executable(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Write `text` to `path` atomically with mode 0755. */
async function install(path: string, text: string): Promise<void> {
  await writeFileAtomic(path, text, { mode: 0o755 });
}

async function buildC(binDir: string, compiler: string): Promise<WrapperBinary> {
  const path = join(binDir, `job-wrapper-${hashOf(WRAPPER_C_SOURCE)}`);
  if (await executable(path)) return { kind: 'c', path };
  const tag = `${process.pid}.${randomBytes(4).toString('hex')}`;
  const src = `${path}.${tag}.c`;
  const out = `${path}.${tag}.tmp`;
  await writeFile(src, WRAPPER_C_SOURCE);
  try {
    await run(compiler, ['-O2', '-o', out, src], { timeout: 120_000 });
    await chmod(out, 0o755);
    await rename(out, path);
  } finally {
    await rm(src, { force: true });
    await rm(out, { force: true });
  }
  return { kind: 'c', path };
}

async function buildSh(binDir: string): Promise<WrapperBinary> {
  const path = join(binDir, `job-wrapper-${hashOf(WRAPPER_SH_SOURCE)}.sh`);
  if (!(await executable(path))) await install(path, WRAPPER_SH_SOURCE);
  return { kind: 'sh', path };
}

/**
 * The wrapper to use. `auto`: C if it compiles, else sh (`onFallback` says why);
 * `c`: C or a CE_ERR_LRMS_UNAVAILABLE error; `sh`: the script.
 */
export async function ensureWrapper(
  workDir: string,
  mode: 'auto' | WrapperKind,
  compiler: string,
  onFallback?: (why: string) => void,
): Promise<WrapperBinary> {
  const binDir = join(workDir, 'bin');
  await mkdir(binDir, { recursive: true });
  if (mode === 'sh') return buildSh(binDir);
  try {
    return await buildC(binDir, compiler);
  } catch (e) {
    const why = e instanceof Error ? (e.message.split('\n')[0] ?? e.message) : String(e);
    if (mode === 'c') throw ceError('CE_ERR_LRMS_UNAVAILABLE', 'The C job wrapper could not be compiled', { cause: e });
    onFallback?.(why);
    return buildSh(binDir);
  }
}
