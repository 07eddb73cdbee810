/**
 * What a pool account's user leaves outside the session, removed before the account's
 * lease passes to another identity (docs/security.md, "Pool accounts"): every process of
 * the account is ended, and everything it owns in the shared temporary folders (/tmp,
 * /var/tmp, /dev/shm) is removed. Root only: the service of a mapping is root, and a
 * service that is not root runs no job as another account.
 *
 *  - Processes: a process started as the account (never root) sends SIGKILL to -1, which
 *    the kernel delivers to every process the account may signal, except the sender, in
 *    one pass that no fork can slip through; then /proc is scanned for any process with
 *    the account's uid among its real, effective, saved or file-system uid (a set-uid
 *    program the account started, say), and root kills those. Repeated until the scan
 *    finds none; a process that survives every round fails the cleanup.
 *  - Files: `find -xdev -user UID -delete` in each folder, as root, once no process of the
 *    account is left (nothing of it can race the walk; find never follows a link), then a
 *    second find that must find nothing (a folder of the account holding another user's
 *    file stays, and fails the cleanup: the account is not handed on with it).
 */
import { execFile, spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ceError } from '../errors/ce-error.js';
import { lookUpAccount } from './resolve-account.js';

const run = promisify(execFile);

/** The shared temporary folders a pool account's files are removed from. */
export const SHARED_TMP = ['/tmp', '/var/tmp', '/dev/shm'] as const;

export interface CleanupOptions {
  /** Folders to clear (default SHARED_TMP; those that do not exist are skipped). */
  readonly folders?: readonly string[];
  /** Kill rounds before giving up on processes that keep appearing. */
  readonly rounds?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Pids of live (not zombie) processes with `uid` as any of their uids. */
export async function processesOf(uid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const status = await readFile(`/proc/${name}/status`, 'utf8').catch(() => '');
    const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/).map(Number) ?? [];
    const state = /^State:\s+(\S)/m.exec(status)?.[1];
    if (uids.includes(uid) && state !== 'Z' && state !== 'X') pids.push(Number(name));
  }
  return pids;
}

/** SIGKILL to -1 from a process of the account: every process it may signal, in one pass. */
function killAllAs(uid: number, gid: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', 'kill -9 -1 2>/dev/null; exit 0'], { uid, gid, stdio: 'ignore', env: {} });
    child.on('error', () => resolve());
    child.on('close', () => resolve());
  });
}

async function endProcesses(name: string, uid: number, gid: number, rounds: number): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    await killAllAs(uid, gid);
    const left = await processesOf(uid);
    if (left.length === 0) return;
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone meanwhile */
      }
    }
    await sleep(50);
  }
  const left = await processesOf(uid);
  if (left.length > 0)
    throw ceError('CE_ERR_ACCOUNT_CLEANUP_FAILED', `processes of ${name} survive: ${left.slice(0, 10).join(' ')}`);
}

async function removeFiles(name: string, uid: number, folders: readonly string[]): Promise<void> {
  const present: string[] = [];
  for (const f of folders) if ((await stat(f).catch(() => undefined))?.isDirectory()) present.push(f);
  if (present.length === 0) return;
  const find = (more: string[]) =>
    run('find', [...present, '-xdev', '-mindepth', '1', '-user', String(uid), ...more], {
      timeout: 300_000,
      maxBuffer: 1 << 20,
    });
  // Errors (a file vanished, a folder not empty) are judged by the check below.
  await find(['-delete']).catch(() => undefined);
  const left = await find(['-print', '-quit']).then(
    (r) => r.stdout.trim(),
    (e: unknown) => `(find failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
  );
  if (left !== '') throw ceError('CE_ERR_ACCOUNT_CLEANUP_FAILED', `${name} still owns ${left}`);
}

/** End every process of the account and remove what it owns in the shared temporary folders. */
export async function cleanUpAccount(name: string, o: CleanupOptions = {}): Promise<void> {
  if (process.geteuid?.() !== 0)
    throw ceError('CE_ERR_ACCOUNT_CLEANUP_FAILED', `the service is not root and cannot clean up ${name}`);
  // Fresh from the name service (uid 0 is refused there): never a cached uid.
  const a = await lookUpAccount(name);
  await endProcesses(name, a.uid, a.gid, o.rounds ?? 20);
  await removeFiles(name, a.uid, o.folders ?? SHARED_TMP);
}
