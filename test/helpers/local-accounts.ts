/**
 * Real local accounts for the tests of jobs under mapped accounts: made with `useradd`
 * (unique names), removed with `userdel -r`. Only root can; elsewhere the tests skip,
 * except where CERES_REQUIRE_ROOT=1 (CI, which runs as root) makes that a failure.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

export interface TestAccount {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

export const isRoot = process.geteuid?.() === 0;

/** CI sets CERES_REQUIRE_ROOT=1: there not being root is a failure, not a skip. */
export function rootRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CERES_REQUIRE_ROOT;
  return v !== undefined && v !== '' && v !== '0';
}

/** The `skip` option of a describe() that needs root: a reason, or false (run; and fail when not root but required). */
export function skipUnlessRoot(what: string): string | false {
  if (isRoot || rootRequired()) return false;
  return `${what} needs root (to create local accounts and switch to them); CERES_REQUIRE_ROOT=1 makes this a failure`;
}

/** Throws (in `before`) when root is required but missing, so the run fails clearly. */
export function assertRoot(): void {
  if (!isRoot)
    throw new Error(
      'CERES_REQUIRE_ROOT is set but the tests do not run as root: jobs under local accounts cannot be tested',
    );
}

const made: string[] = [];
const groups: string[] = [];

/** A new account with its own group, and a home (removed with it). */
export function createAccount(prefix = 'cer'): TestAccount {
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  execFileSync('useradd', ['-m', '-s', '/bin/sh', '-U', name], { stdio: 'pipe' });
  made.push(name);
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return { name, uid, gid };
}

/** A new group with `members`; its gid. */
export function createGroup(members: readonly string[], prefix = 'cerg'): { name: string; gid: number } {
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  execFileSync('groupadd', [name], { stdio: 'pipe' });
  groups.push(name);
  for (const m of members) execFileSync('usermod', ['-a', '-G', name, m], { stdio: 'pipe' });
  const gid = Number(execFileSync('getent', ['group', name], { encoding: 'utf8' }).split(':')[2]);
  return { name, gid };
}

/** `cat file` as `account` (what a job under it could try): its standard error, empty when it could read. */
export function catAs(account: { readonly name: string }, file: string): string {
  return spawnSync('runuser', ['-u', account.name, '--', 'cat', file], { encoding: 'utf8' }).stderr;
}

/**
 * Runs `during` while a process of `account` waits for `file` to appear and opens it for
 * reading the moment it does (polling every 5 ms): what that process said, `OPENED` when it
 * could open it, the shell's "Permission denied" when not. Waits up to 20 s after `during`
 * for the attempt.
 */
export async function openAsItAppears(
  account: { readonly name: string },
  file: string,
  during: () => Promise<void>,
): Promise<string> {
  const watcher = spawn(
    'runuser',
    ['-u', account.name, '--', 'sh', '-c', 'until [ -e "$0" ]; do sleep 0.005; done; exec 3<"$0" && echo OPENED', file],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let said = '';
  watcher.stdout.on('data', (d: Buffer) => (said += d.toString()));
  watcher.stderr.on('data', (d: Buffer) => (said += d.toString()));
  const watched = new Promise<void>((r) => watcher.once('exit', () => r()));
  try {
    await during();
    await Promise.race([watched, new Promise((r) => setTimeout(r, 20_000).unref())]);
  } finally {
    watcher.kill();
  }
  return said;
}

/** Removes every account and group this process made (best effort: a failure is reported, not thrown). */
export function removeAccounts(): void {
  for (const name of made.splice(0)) {
    try {
      execFileSync('userdel', ['-r', '-f', name], { stdio: 'pipe' });
    } catch (e) {
      process.stderr.write(`could not remove test account ${name}: ${String(e)}\n`);
    }
  }
  for (const name of groups.splice(0)) {
    try {
      execFileSync('groupdel', [name], { stdio: 'pipe' });
    } catch {
      /* removed with its last member's private group, or in use: left */
    }
  }
}
