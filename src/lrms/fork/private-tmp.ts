/**
 * Private /tmp, /var/tmp and /dev/shm for the fork backend's jobs under local accounts
 * (docs/security.md, "Private temporary folders"). The C wrapper does the work as root
 * (../core/wrapper-c.ts, SCRATCH): a mount namespace of the job's own, whose /tmp and /var/tmp
 * are `<scratch>/tmp` and whose /dev/shm is `<scratch>/shm`, removed with the job. This
 * module decides whether a job gets them and where they live.
 *
 * Where: `<workDir>/scratch/<mark>`, not in the session directory. Every local user can
 * read any process's /proc/<pid>/mountinfo, which names the source of a bind mount: a
 * folder in the session directory would show another account's job its session path.
 * The mark is a hash of the attempt's lrms directory (./job-processes.ts) and says
 * nothing about the job; the work directory is 0700 and root's, so the folders are
 * reachable only through the job's own mounts (not even by other jobs of the account).
 */
import { execFile } from 'node:child_process';
import { realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { SHARED_TMP } from '../../accounts/account-cleanup.js';

const run = promisify(execFile);

/** The parent of every job's scratch folder. */
export const scratchRoot = (workDir: string): string => join(workDir, 'scratch');

/** The scratch folder of the attempt with `mark`. */
export const jobScratch = (root: string, mark: string): string => join(root, mark);

/**
 * Whether the wrapper can give jobs a private /tmp here: it tries, in a process of its
 * own, what it does for a job (a mount namespace, private mounts, a bind mount). Only
 * root can (CAP_SYS_ADMIN); a container without it, or a seccomp profile, refuses.
 */
export async function probePrivateTmp(wrapperPath: string): Promise<{ ok: boolean; why: string }> {
  try {
    const { stdout } = await run(wrapperPath, ['--probe-private-tmp'], { timeout: 10_000, env: {} });
    const line = stdout.trim();
    return line === 'ok'
      ? { ok: true, why: 'mount namespaces available' }
      : { ok: false, why: line.replace(/^no /, '') };
  } catch (e) {
    return { ok: false, why: `the probe failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}` };
  }
}

/**
 * The folder of `path` (resolved) among SHARED_TMP (what a private /tmp covers), if it lies in one: a job
 * whose session directory is there keeps the shared folders (its session would be hidden
 * under its private /tmp).
 */
export async function inSharedTmp(path: string): Promise<string | undefined> {
  const real = await realpath(path).catch(() => path);
  return SHARED_TMP.find((f) => real === f || real.startsWith(`${f}/`));
}

/** Remove a job's scratch folder (the wrapper removes it; this is for a wrapper that was killed). */
export async function removeScratch(dir: string): Promise<void> {
  // fs.rm never follows a link; the folder's parents are root's.
  await rm(dir, { recursive: true, force: true });
}
