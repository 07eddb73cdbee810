/** A job as submission stores it, for tests that fill a real JobStore directly. */
import type { NewJob } from '../../src/store/job-store.js';

export function newJobRow(id: string, owner: string, more: Partial<NewJob> = {}): NewJob {
  return {
    id,
    owner,
    state: 'ACCEPTED',
    restState: 'ACCEPTING',
    queue: '',
    delegationId: null,
    delegationIds: [],
    format: 'xrsl',
    description: {},
    raw: '&(executable="/bin/true")',
    createdAt: Date.now(),
    rerunsLeft: 0,
    clientHost: null,
    ...more,
  };
}
