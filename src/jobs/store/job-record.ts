/**
 * A job as stored: the row of `jobs` mapped to a typed record. The engine owns the
 * meaning of `state`/`pending`/`lrmsState`/`outcome` (src/engine/states.ts); the store
 * only persists them and compares-and-sets on `version`.
 */
import type { JobDescription } from '../../jobdesc/model.js';

export interface JobRecord {
  readonly id: string;
  readonly owner: string;
  readonly state: string;
  readonly pending: boolean;
  readonly restState: string;
  readonly lrmsState: string | null;
  readonly outcome: string | null;
  readonly queue: string;
  readonly delegationId: string | null;
  readonly format: 'adl' | 'xrsl';
  readonly description: JobDescription;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly localId: string | null;
  readonly exitCode: number | null;
  readonly failedState: string | null;
  readonly failedCause: string | null;
  readonly failureReason: string | null;
  readonly killRequested: boolean;
  readonly cleanRequested: boolean;
  readonly restartRequested: boolean;
  readonly rerunsLeft: number;
  readonly startedAt: number | null;
  readonly endedAt: number | null;
  readonly eraseAt: number | null;
  readonly clientHost: string | null;
  /** Identity of the session directory made at submission; null for jobs stored before it was recorded. */
  readonly sessionIdent: string | null;
  /** Local account the owner was mapped to at submission (src/authz); null: not mapped. */
  readonly localAccount: string | null;
  /** The owner's verified VOMS FQANs at submission; empty: none. */
  readonly fqans: readonly string[];
  readonly engine: Readonly<Record<string, unknown>>;
  readonly version: number;
}

export interface JobRow {
  id: string;
  owner: string;
  state: string;
  pending: number;
  rest_state: string;
  lrms_state: string | null;
  outcome: string | null;
  queue: string;
  delegation_id: string | null;
  format: string;
  description: string;
  created_at: number;
  updated_at: number;
  local_id: string | null;
  exit_code: number | null;
  failed_state: string | null;
  failed_cause: string | null;
  failure_reason: string | null;
  kill_requested: number;
  clean_requested: number;
  restart_requested: number;
  reruns_left: number;
  started_at: number | null;
  ended_at: number | null;
  erase_at: number | null;
  client_host: string | null;
  session_ident: string | null;
  local_account: string | null;
  fqans: string | null;
  engine: string;
  version: number;
}

/**
 * Row → record. The two JSON columns are parsed on first access only: most reads
 * (status, listing, the scheduler's checks) never look at the description.
 */
export function fromRow(r: JobRow): JobRecord {
  let description: JobDescription | undefined;
  let engine: Record<string, unknown> | undefined;
  return {
    id: r.id,
    owner: r.owner,
    state: r.state,
    pending: r.pending !== 0,
    restState: r.rest_state,
    lrmsState: r.lrms_state,
    outcome: r.outcome,
    queue: r.queue,
    delegationId: r.delegation_id,
    format: r.format === 'xrsl' ? 'xrsl' : 'adl',
    get description(): JobDescription {
      return (description ??= JSON.parse(r.description) as JobDescription);
    },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    localId: r.local_id,
    exitCode: r.exit_code,
    failedState: r.failed_state,
    failedCause: r.failed_cause,
    failureReason: r.failure_reason,
    killRequested: r.kill_requested !== 0,
    cleanRequested: r.clean_requested !== 0,
    restartRequested: r.restart_requested !== 0,
    rerunsLeft: r.reruns_left,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    eraseAt: r.erase_at,
    clientHost: r.client_host,
    sessionIdent: r.session_ident,
    localAccount: r.local_account,
    fqans: r.fqans === null ? [] : (JSON.parse(r.fqans) as string[]),
    get engine(): Record<string, unknown> {
      return (engine ??= JSON.parse(r.engine) as Record<string, unknown>);
    },
    version: r.version,
  };
}

/** Fields a transition may change (everything but identity and submission data). */
export interface JobChanges {
  state?: string;
  pending?: boolean;
  restState?: string;
  lrmsState?: string | null;
  outcome?: string | null;
  localId?: string | null;
  exitCode?: number | null;
  failedState?: string | null;
  failedCause?: string | null;
  failureReason?: string | null;
  killRequested?: boolean;
  cleanRequested?: boolean;
  restartRequested?: boolean;
  rerunsLeft?: number;
  startedAt?: number | null;
  endedAt?: number | null;
  eraseAt?: number | null;
  engine?: Record<string, unknown>;
}

export const columnOf: Record<keyof JobChanges, string> = {
  state: 'state',
  pending: 'pending',
  restState: 'rest_state',
  lrmsState: 'lrms_state',
  outcome: 'outcome',
  localId: 'local_id',
  exitCode: 'exit_code',
  failedState: 'failed_state',
  failedCause: 'failed_cause',
  failureReason: 'failure_reason',
  killRequested: 'kill_requested',
  cleanRequested: 'clean_requested',
  restartRequested: 'restart_requested',
  rerunsLeft: 'reruns_left',
  startedAt: 'started_at',
  endedAt: 'ended_at',
  eraseAt: 'erase_at',
  engine: 'engine',
};
