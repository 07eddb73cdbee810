/**
 * Replacing a file atomically: the data goes to a temporary file in the same directory
 * (exclusive create, never an existing file or a link), which is renamed over the
 * target. Readers see the old content or the new, never a mix or an empty file.
 *
 * `durable` (the default) also survives a power cut: the temporary file is fsync'd
 * before the rename and the directory after it, so the new name points at complete
 * data once this resolves. Files that are rebuilt from the database anyway (control
 * files) or rewritten on every retry (a batch job's script) opt out: on this kind of
 * disk an fsync costs more than the rest of their step.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

export interface AtomicWriteOptions {
  /** Permission bits of the new file (less the umask unless `exactMode`); default 0o666 as writeFile. */
  readonly mode?: number;
  /** Set `mode` exactly, whatever the umask (e.g. a 0644 certificate under umask 077). */
  readonly exactMode?: boolean;
  /** Group of the new file, set before it takes the target's name (readers never see another). */
  readonly gid?: number;
  /** fsync the data and the directory (default true). */
  readonly durable?: boolean;
}

export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  o: AtomicWriteOptions = {},
): Promise<void> {
  const mode = o.mode ?? 0o666;
  const durable = o.durable ?? true;
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const fh = await open(tmp, 'wx', mode);
    try {
      await fh.writeFile(data);
      if (o.gid !== undefined) await fh.chown(-1, o.gid);
      if (o.exactMode === true) await fh.chmod(mode);
      if (durable) await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
  if (durable) await syncDir(dirname(path));
}

/** fsync a directory, so the names created or renamed in it are on disk. */
export async function syncDir(dir: string): Promise<void> {
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
