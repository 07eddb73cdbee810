/**
 * Who a new job's session directory is made for: the mapped local account when the
 * service can give it away (runs as root) and the account resolves. An account that
 * does not resolve leaves the directory the service's: the job then fails at its batch
 * submission with that reason (src/lrms/fork/job-account.ts) and never runs as the
 * service user; the directory is not handed to anyone it could not be checked against.
 */
import type { AccountResolver } from './resolve-account.js';

export interface AccountOwner {
  readonly uid: number;
  readonly gid: number;
}

export function sessionOwnerFor(
  resolver: AccountResolver,
  warn: (obj: object, msg: string) => void,
): (account: string) => Promise<AccountOwner | undefined> {
  return async (account) => {
    if ((process.geteuid?.() ?? -1) !== 0) return undefined;
    try {
      const a = await resolver.resolve(account);
      return { uid: a.uid, gid: a.gid };
    } catch (e) {
      warn(
        { account, why: e instanceof Error ? e.message : String(e) },
        "the mapped local account does not resolve: the session directory stays the service's and the job will fail",
      );
      return undefined;
    }
  };
}
