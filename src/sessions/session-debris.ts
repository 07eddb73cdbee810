/**
 * Crash debris in session directories: the temporary files plain PUTs write before
 * renaming (`.ceres-upload.*`, upload.ts) stay behind when the service dies during an
 * upload (`kill -9`, power loss). They are hidden from listings and unaddressable, so
 * nothing else would ever remove them before the job is cleaned.
 *
 * The sweep runs in the background after the service listens: it walks every session
 * directory through descriptors (O_DIRECTORY|O_NOFOLLOW: a link is never followed,
 * whatever the job put where), with few operations in flight so requests keep the
 * thread pool, a bounded depth, and removes only temporaries last modified before the
 * service started (an upload in progress now writes to a fresh one).
 */
import { constants as C } from 'node:fs';
import { lstat, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { DIR_FLAGS, dirPath, inDir } from '../fs/safe-fs.js';
import { UPLOAD_TEMP_PREFIX } from './session-path.js';

export interface DebrisSweepOptions {
  /** Only temporaries modified before this instant (epoch ms) are debris. */
  readonly before: number;
  /** Sessions looked at concurrently (default 2). */
  readonly concurrency?: number;
  /** Directory levels below a session directory that are looked into (default 32). */
  readonly maxDepth?: number;
  readonly signal?: AbortSignal;
}

export interface DebrisSweepResult {
  readonly sessions: number;
  readonly removed: number;
  readonly ms: number;
}

/** Sweeps every directory in the open sessions folder `folder`. */
export async function sweepUploadDebris(folder: FileHandle, o: DebrisSweepOptions): Promise<DebrisSweepResult> {
  const t0 = Date.now();
  const maxDepth = o.maxDepth ?? 32;
  let removed = 0;
  const names = await readdir(dirPath(folder));
  let next = 0;

  const walk = async (dir: FileHandle, depth: number): Promise<void> => {
    const entries = await readdir(dirPath(dir), { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (o.signal?.aborted) return;
      if (e.name.startsWith(UPLOAD_TEMP_PREFIX) && e.isFile()) {
        const s = await lstat(inDir(dir, e.name)).catch(() => undefined);
        if (
          s?.isFile() &&
          s.mtimeMs < o.before &&
          (await unlink(inDir(dir, e.name)).then(
            () => true,
            () => false,
          ))
        )
          removed++;
      } else if (e.isDirectory() && depth < maxDepth) {
        await within(dir, e.name, (sub) => walk(sub, depth + 1));
      }
    }
  };

  const worker = async (): Promise<void> => {
    while (next < names.length && !o.signal?.aborted) {
      const n = names[next++] as string;
      await within(folder, n, (d) => walk(d, 0));
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, o.concurrency ?? 2) }, worker));
  return { sessions: names.length, removed, ms: Date.now() - t0 };
}

/** Runs `fn` on `name` in `parent` if it is a real directory (links and files are skipped). */
async function within(parent: FileHandle, name: string, fn: (d: FileHandle) => Promise<void>): Promise<void> {
  let h: FileHandle;
  try {
    h = await open(inDir(parent, name), DIR_FLAGS | C.O_NONBLOCK);
  } catch {
    return; // a link, a file, gone meanwhile, unreadable
  }
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}
