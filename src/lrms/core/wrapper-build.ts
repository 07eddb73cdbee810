/**
 * Provides the job wrapper executable every backend runs its jobs under: the C wrapper
 * compiled with the system compiler into `<workDir>/bin/` (once per source version: the
 * file name carries a hash of the source), or the POSIX sh wrapper when asked for or when
 * no compiler works. Compiling is the one process a backend starts from the service
 * itself, once per program (`compileOnce`, also used for the fork backend's launcher).
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

/** How a program is compiled (the defaults: an executable, mode 0755). */
export interface CompileOptions {
  /** Compiler flags besides `-O2 -o OUT SRC` (e.g. `-shared -fPIC` for a loadable module). */
  readonly flags?: readonly string[];
  readonly mode?: number;
  /** Appended to the file name (e.g. `.node`). */
  readonly suffix?: string;
}

/** Where `compileOnce` puts `source`: `<binDir>/<name>-<hash of source><suffix>`. */
export function compiledPath(binDir: string, name: string, source: string, suffix = ''): string {
  return join(binDir, `${name}-${hashOf(source)}${suffix}`);
}

/**
 * `compiledPath(...)`, compiled unless it is there already (a new source version gets a
 * new name). The compiler writes a temporary beside it, which is renamed into place, so
 * a crash or a concurrent start never leaves half a program under the final name.
 */
export async function compileOnce(
  binDir: string,
  name: string,
  source: string,
  compiler: string,
  o: CompileOptions = {},
): Promise<string> {
  const mode = o.mode ?? 0o755;
  const path = compiledPath(binDir, name, source, o.suffix);
  // An executable must be executable; a module (no execute bits) readable.
  const present = await access(path, mode & 0o111 ? constants.X_OK : constants.R_OK).then(
    () => true,
    () => false,
  );
  if (present) return path;
  const tag = `${process.pid}.${randomBytes(4).toString('hex')}`;
  const src = `${path}.${tag}.c`;
  const out = `${path}.${tag}.tmp`;
  await writeFile(src, source, { mode: 0o600 });
  try {
    await run(compiler, ['-O2', ...(o.flags ?? []), '-o', out, src], { timeout: 120_000 });
    await chmod(out, mode);
    await rename(out, path);
  } finally {
    await rm(src, { force: true });
    await rm(out, { force: true });
  }
  return path;
}

/**
 * The C wrapper, linked statically where the C library allows it, dynamically otherwise.
 * Every job starts one wrapper, so its start-up is paid per job: a dynamically linked one
 * spent a sixth of all the machine's CPU in a drain of trivial jobs in the dynamic loader
 * (`perf record -a`), and the static one drained 72–88 against 61–79 jobs/s in alternating
 * runs (docs/performance.md, "A trivial job, step by step"). A static wrapper also runs on a
 * batch node whose C library differs from the service host's.
 */
async function buildC(binDir: string, compiler: string): Promise<WrapperBinary> {
  const name = 'job-wrapper';
  const asStatic = { flags: ['-static'], suffix: '-static' } as const;
  // A dynamic build of this source is there only because the static link failed before:
  // use it rather than fail the same static link again at every start.
  const dynamic = compiledPath(binDir, name, WRAPPER_C_SOURCE);
  const useDynamic =
    !(await executable(compiledPath(binDir, name, WRAPPER_C_SOURCE, asStatic.suffix))) && (await executable(dynamic));
  const path = useDynamic
    ? dynamic
    : await compileOnce(binDir, name, WRAPPER_C_SOURCE, compiler, asStatic).catch(() =>
        compileOnce(binDir, name, WRAPPER_C_SOURCE, compiler),
      );
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
