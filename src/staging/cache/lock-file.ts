/**
 * A download lock between processes sharing a cache directory (a restarted service
 * whose predecessor still runs, an admin tool): `<entry>.lock`, created with O_EXCL,
 * holding the owner's host, pid and a random token. The holder refreshes its mtime;
 * a lock whose mtime is older than `staleMs`, or whose process is gone on this host,
 * is taken over. Inside one process, single-flight is done in memory (FileCache);
 * this file only guards against other processes. A successful holder turns the lock
 * file into the entry's metadata file (commit), a failed one deletes it.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { sleep } from '../retry.js';

export interface HeldLock {
  /** Give the lock up (the work failed or was not needed). */
  release(): Promise<void>;
  /**
   * Turn the lock file into `path` holding `content`: the lock ends at the moment the
   * result appears. (It also spares creating and deleting an inode per download, which
   * is slow on file systems that hold back recently freed inodes.)
   */
  commit(path: string, content: string): Promise<void>;
}

interface LockBody {
  host: string;
  pid: number;
  token: string;
}

export async function acquireLock(path: string, staleMs: number, signal: AbortSignal, pollMs = 250): Promise<HeldLock> {
  for (;;) {
    const held = await tryLock(path, staleMs);
    if (held !== undefined) return held;
    await sleep(pollMs, signal);
  }
}

export async function tryLock(path: string, staleMs: number): Promise<HeldLock | undefined> {
  const body: LockBody = { host: hostname(), pid: process.pid, token: randomBytes(8).toString('hex') };
  try {
    await writeFile(path, JSON.stringify(body), { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    if (await isStale(path, staleMs)) {
      await rm(path, { force: true });
      return tryLock(path, staleMs);
    }
    return undefined;
  }
  const timer = setInterval(
    () => {
      const now = new Date();
      utimes(path, now, now).catch(() => undefined);
    },
    Math.max(1000, staleMs / 3),
  );
  timer.unref();
  return {
    release: async () => {
      clearInterval(timer);
      const current = await readBody(path);
      if (current?.token === body.token) await rm(path, { force: true });
    },
    commit: async (target, content) => {
      clearInterval(timer);
      await writeFile(path, content, { mode: 0o600 });
      await rename(path, target);
    },
  };
}

async function isStale(path: string, staleMs: number): Promise<boolean> {
  const st = await stat(path).catch(() => undefined);
  if (st === undefined) return true;
  if (Date.now() - st.mtimeMs > staleMs) return true;
  const body = await readBody(path);
  if (body === undefined) return Date.now() - st.mtimeMs > 5000; // being written right now, or garbage
  if (body.host !== hostname() || body.pid === process.pid) return false;
  try {
    process.kill(body.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function readBody(path: string): Promise<LockBody | undefined> {
  try {
    const v = JSON.parse(await readFile(path, 'utf8')) as Partial<LockBody>;
    if (typeof v.host === 'string' && typeof v.pid === 'number' && typeof v.token === 'string') return v as LockBody;
  } catch {
    // missing or torn
  }
  return undefined;
}
