/**
 * After a root restore has unpacked a backup with its owners: each job's folders (its
 * session directory, its batch folder `lrms/jobs/<xx>/<id>/`) checked against the
 * account the job runs as, so that no job runs as an account other than the one its
 * files belong to, and no account is handed another's files.
 *
 * The account a job runs as is the one recorded at submission (`local_account`; a job
 * without one runs as `accounts.default`, or as the service when it is not root). Its
 * folders are right when every entry in them belongs to that account or to the service
 * (what the service made and has not given away). They are not when:
 *   - the account does not resolve now, has uid 0 or a uid below `accounts.minUid`
 *     (the default account aside): the job could not run anyway;
 *   - the configuration given to the restore no longer names the account (fixed, pool
 *     or grid-mapfile account, or `accounts.default`): the site has withdrawn it;
 *   - an entry belongs to a third uid (an account that no longer exists, another user's,
 *     root's where the service is not root), or the account now has another uid than
 *     the one the files carry (owners are restored by number).
 * Such a job is handled safely rather than repaired: its folders are given to the
 * service and closed (0700), so no account reaches what is in them, and a kill is
 * recorded for the service to carry out at its start (admin-requests.ts), which also
 * cancels a batch job still running; a finished job keeps its outputs for the service
 * to serve. Each is reported with the reason.
 *
 * And for every job whose session directory came out of the archive: the directory is a
 * new one (another inode), so the identity stored for it (src/sessions/session-dirs.ts)
 * is set to the restored directory's; otherwise the service would take each restored
 * session for a replaced one (CE_ERR_SESSION_REPLACED).
 */
import type { Stats } from 'node:fs';
import { chmod, chown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../store/database.js';
import { FINAL_STATES, type InternalState } from '../vocabulary/job-states.js';
import { AdminRequests } from './admin-requests.js';

export interface OwnerRules {
  /** The service's uid (the owner of the database). */
  readonly serviceUid: number;
  /** Resolves the account a job runs as to its uid, or throws why it cannot run as it. */
  readonly uidOf: (account: string) => Promise<number>;
  /** The account of a job stored without one (`accounts.default`); undefined: the service's. */
  readonly defaultAccount: string | undefined;
  /** Accounts the configuration maps jobs to; undefined: not known (no configuration given). */
  readonly mapped: ReadonlySet<string> | undefined;
}

export interface HeldJob {
  readonly id: string;
  readonly reason: string;
  /** A kill was recorded (the job was not over). */
  readonly killed: boolean;
}

export interface OwnerReport {
  readonly held: readonly HeldJob[];
  /** Jobs whose restored session directory's identity was recorded. */
  readonly sessionsRecorded: number;
}

interface Row {
  readonly id: string;
  readonly state: string;
  readonly account: string | null;
  readonly ident: string | null;
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  return lstat(p).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
}

/** The first entry at or below `dir` owned by none of `uids` (never following a link). */
async function foreignEntry(
  dir: string,
  uids: ReadonlySet<number>,
): Promise<{ path: string; uid: number } | undefined> {
  const s = await lstatOrUndefined(dir);
  if (s === undefined) return undefined;
  if (!uids.has(s.uid)) return { path: dir, uid: s.uid };
  if (!s.isDirectory()) return undefined;
  for (const n of await readdir(dir)) {
    const found = await foreignEntry(join(dir, n), uids);
    if (found) return found;
  }
  return undefined;
}

/** The job's folders the restore may have made. */
export function jobFolders(stateDir: string, id: string): { session: string; lrms: string } {
  return { session: join(stateDir, 'sessions', id), lrms: join(stateDir, 'lrms', 'jobs', id.slice(0, 2), id) };
}

async function whyNot(stateDir: string, row: Row, rules: OwnerRules): Promise<string | undefined> {
  const account = row.account ?? rules.defaultAccount;
  const f = jobFolders(stateDir, row.id);
  const present = [(await lstatOrUndefined(f.session)) && f.session, (await lstatOrUndefined(f.lrms)) && f.lrms].filter(
    (p): p is string => typeof p === 'string',
  );
  if (present.length === 0) return undefined;
  const allowed = new Set([rules.serviceUid]);
  let who = 'the service';
  if (account !== undefined) {
    if (rules.mapped !== undefined && !rules.mapped.has(account))
      return `the configuration no longer maps jobs to local account ${account}`;
    try {
      const uid = await rules.uidOf(account);
      allowed.add(uid);
      who = `the job's account ${account} (uid ${uid}) nor to the service`;
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
  }
  for (const p of present) {
    const foreign = await foreignEntry(p, allowed);
    if (foreign) return `${foreign.path} belongs to uid ${foreign.uid}, not to ${who}`;
  }
  return undefined;
}

/** Gives the folder to the service and closes it: no account reaches its content. */
async function close(dir: string, serviceUid: number): Promise<void> {
  const s = await lstatOrUndefined(dir);
  if (s === undefined || !s.isDirectory()) return;
  await chown(dir, serviceUid, s.gid);
  await chmod(dir, 0o700);
}

const SPECIAL_IDENTITY = new Set(['not-made', 'never-made']);

/**
 * Records the identities of the restored session directories; with `rules` (a root
 * restore), checks every job's folders and holds the jobs whose folders are not right.
 */
export async function settleRestoredJobs(
  stateDir: string,
  db: Db,
  rules: OwnerRules | undefined,
): Promise<OwnerReport> {
  // SELECT *: a backup of an older release may lack a column (its start migrates it).
  const rows = (db.prepare('SELECT * FROM jobs ORDER BY id').all() as Record<string, unknown>[]).map((r): Row => ({
    id: String(r.id),
    state: String(r.state),
    account: typeof r.local_account === 'string' ? r.local_account : null,
    ident: typeof r.session_ident === 'string' ? r.session_ident : null,
  }));
  const setIdent = db.prepare('UPDATE jobs SET session_ident = ? WHERE id = ?');
  const held: HeldJob[] = [];
  let sessionsRecorded = 0;
  const requests = new AdminRequests(db);
  for (const row of rows) {
    const f = jobFolders(stateDir, row.id);
    if (row.ident !== null && !SPECIAL_IDENTITY.has(row.ident)) {
      const s = await lstat(f.session, { bigint: true }).catch(() => undefined);
      if (s?.isDirectory()) {
        setIdent.run(`${s.dev}:${s.ino}`, row.id);
        sessionsRecorded++;
      }
    }
    if (rules === undefined) continue;
    const reason = await whyNot(stateDir, row, rules);
    if (reason === undefined) continue;
    await close(f.session, rules.serviceUid);
    await close(f.lrms, rules.serviceUid);
    const over = FINAL_STATES.includes(row.state as InternalState);
    if (!over) requests.enqueue('kill', [row.id], `ceres admin restore: ${reason}`);
    held.push({ id: row.id, reason, killed: !over });
  }
  return { held, sessionsRecorded };
}
