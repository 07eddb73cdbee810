/**
 * The state vocabularies the GLUE2 documents speak. They mirror A-REX: the grid
 * manager's internal states (what the `status` control file holds), the one-letter
 * batch-system states its LRMS back-ends report, and the REST states of the
 * interface spec. The job engine owns the transitions; this module only names them.
 */

/** Internal (grid manager) job states; `SUBMIT` is the "submitting" state. */
export type GmState = 'ACCEPTED' | 'PREPARING' | 'SUBMIT' | 'INLRMS' | 'FINISHING' | 'FINISHED' | 'CANCELING' | 'DELETED';

export const GM_STATES: readonly GmState[] = ['ACCEPTED', 'PREPARING', 'SUBMIT', 'INLRMS', 'FINISHING', 'FINISHED', 'CANCELING', 'DELETED'];

/**
 * Batch-system state of a job in INLRMS: `Q` queued, `R` running, `S` suspended/held,
 * `E` exiting, `O` other, `EXECUTED` gone from the batch system (finished there).
 */
export type LrmsState = 'Q' | 'R' | 'S' | 'E' | 'O' | 'EXECUTED';

/** REST job states of the interface (spec and A-REX's info provider). */
export type RestState =
  | 'ACCEPTING'
  | 'ACCEPTED'
  | 'PREPARING'
  | 'PREPARED'
  | 'SUBMITTING'
  | 'QUEUING'
  | 'RUNNING'
  | 'HELD'
  | 'EXITINGLRMS'
  | 'OTHER'
  | 'EXECUTED'
  | 'FINISHING'
  | 'FINISHED'
  | 'FAILED'
  | 'KILLING'
  | 'KILLED'
  | 'WIPED';
