/**
 * The control directory: per-job files for admins and for the `diagnose` endpoint
 * (docs/control-directory.md). Layout as ARC 7, so admins find their way:
 *   <control>/jobs/<c1>/<c2>/<c3>/<rest-of-id>/<name>
 * The database is the source of truth; these files are written atomically (temp file
 * + rename, never a torn file) and append-only logs (`errors`) are appended.
 * `description`, `local`, `status` and `xml` are rendered from the record on read
 * (always current); the writer also keeps files for them for admins' tools.
 */
import { appendFile as appendFileCb } from 'node:fs';
import { mkdir, readFile, rm, open } from 'node:fs/promises';
import { writeFileAtomic } from '../fs/atomic-write.js';
import { join } from 'node:path';

export const DIAGNOSE_NAMES = [
  'failed',
  'local',
  'errors',
  'description',
  'diag',
  'comment',
  'status',
  'acl',
  'xml',
  'input',
  'output',
  'input_status',
  'output_status',
  'statistics',
] as const;
export type DiagnoseName = (typeof DIAGNOSE_NAMES)[number];

export function isDiagnoseName(s: string): s is DiagnoseName {
  return (DIAGNOSE_NAMES as readonly string[]).includes(s);
}

export class ControlDir {
  constructor(readonly root: string) {}

  jobDir(id: string): string {
    return join(this.root, 'jobs', id.slice(0, 3), id.slice(3, 6), id.slice(6, 9), id.slice(9));
  }

  file(id: string, name: string): string {
    return join(this.jobDir(id), name);
  }

  /**
   * Runs a write into the job's directory, making the directory when the write finds it
   * missing (ENOENT) and trying once more. The directory exists for every write but a
   * job's first, so this costs one failed call per job where asking first cost a mkdir per
   * write, or a set of every job's id to remember which exist (2.6 MiB of memory with
   * 100,000 jobs waiting, docs/performance.md "Memory"). A directory removed behind the
   * service's back is made again by the next write.
   */
  async #inDir(id: string, op: (dir: string) => Promise<void>): Promise<void> {
    const dir = this.jobDir(id);
    try {
      await op(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      await mkdir(dir, { recursive: true, mode: 0o700 });
      await op(dir);
    }
  }

  /** Atomic replace: readers see the old or the new content, never a mix. */
  async write(id: string, name: string, content: string | Buffer, mode = 0o600): Promise<void> {
    // Not fsync'd: control files are views of the database, rewritten when the job moves.
    await this.#inDir(id, (dir) => writeFileAtomic(join(dir, name), content, { mode, durable: false }));
  }

  async append(id: string, name: string, content: string): Promise<void> {
    // The callback form: a plain descriptor, no FileHandle object to make, track and
    // collect. Appends happen at every state change; this costs about a fifth less CPU.
    await this.#inDir(
      id,
      (dir) =>
        new Promise<void>((resolve, reject) =>
          appendFileCb(join(dir, name), content, { mode: 0o600 }, (e) => (e ? reject(e) : resolve())),
        ),
    );
  }

  async read(id: string, name: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.file(id, name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  /** Opens a control file for streaming (diagnose with Range); undefined if absent. */
  async openFile(id: string, name: string) {
    try {
      return await open(this.file(id, name), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  async remove(id: string, name: string): Promise<void> {
    await rm(this.file(id, name), { force: true });
  }

  /** Remove all control files of a job, keeping `keep` (the minimal record of a wiped job). */
  async removeAll(id: string, keep: readonly string[] = []): Promise<void> {
    if (keep.length === 0) {
      await rm(this.jobDir(id), { recursive: true, force: true });
      return;
    }
    const { readdir } = await import('node:fs/promises');
    let names: string[];
    try {
      names = await readdir(this.jobDir(id));
    } catch {
      return;
    }
    await Promise.all(
      names.filter((n) => !keep.includes(n)).map((n) => rm(join(this.jobDir(id), n), { recursive: true, force: true })),
    );
  }
}

/** `<UTC yyyy-mm-ddThh:mm:ssZ> text` log line for the job's `errors` file. */
export function logLine(text: string, at = new Date()): string {
  return `${at.toISOString().replace(/\.\d{3}Z$/, 'Z')} ${text}\n`;
}
