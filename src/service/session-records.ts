/**
 * The job store as the sessions folder's record of identities (src/sessions/session-dirs.ts):
 * what a job's directory was made with, and whose it is to be when it is made on the job's
 * first use.
 */
import type { JobStore } from '../store/job-store.js';
import type { SessionRecords } from '../sessions/session-dirs.js';
import type { SessionOwner } from '../fs/session-owner.js';

export function sessionRecords(
  store: Pick<JobStore, 'sessionIdentOf' | 'swapSessionIdent' | 'localAccountOf'>,
  ownerOfAccount?: (account: string) => Promise<SessionOwner | undefined>,
): SessionRecords {
  return {
    identity: (id) => store.sessionIdentOf(id),
    swapIdentity: (id, from, to) => store.swapSessionIdent(id, from, to),
    owner: async (id) => {
      const account = store.localAccountOf(id);
      return account === null || account === undefined || ownerOfAccount === undefined
        ? undefined
        : ownerOfAccount(account);
    },
  };
}
