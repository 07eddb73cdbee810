/** The REST job state names a `state=` filter may use (spec §3). */
export const REST_STATE_NAMES: readonly string[] = [
  'ACCEPTING', 'ACCEPTED', 'PREPARING', 'PREPARED', 'SUBMITTING', 'QUEUING', 'RUNNING', 'HELD', 'EXITINGLRMS', 'OTHER',
  'EXECUTED', 'FINISHING', 'FINISHED', 'FAILED', 'KILLING', 'KILLED', 'WIPED',
];
