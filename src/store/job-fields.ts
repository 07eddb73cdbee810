/**
 * The one description of a stored job: each field of the record, its column in `jobs`,
 * the column's value as SQLite returns it (a TypeBox schema), and how the two convert.
 * The record type, the row type, the column list, the row check and both mappings are
 * derived from this table (job-record.ts); a new field is one line here plus the
 * migration that adds its column (migrations.ts, append-only).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { JobDescription } from '../vocabulary/job-description.js';

export interface Field<C extends string = string, S extends TSchema = TSchema, V = unknown> {
  readonly column: C;
  /** The column's value as SQLite returns it. */
  readonly schema: S;
  readonly read: (v: Static<S>) => V;
  readonly write: (v: V) => Static<S>;
}

/** `change`: a transition may change it (JobChanges); `insert`: given at submission (NewJob); `lazy`: decoded on first access. */
interface Flags {
  readonly change?: true;
  readonly insert?: true;
  readonly lazy?: true;
}

const same = <T>(v: T): T => v;
const Text = Type.String();
const Int = Type.Integer();
const NullableText = Type.Union([Type.String(), Type.Null()]);
const NullableInt = Type.Union([Type.Integer(), Type.Null()]);
const Bit = Type.Union([Type.Literal(0), Type.Literal(1)]);

function field<S extends TSchema, V>(schema: S, read: (v: Static<S>) => V, write: (v: V) => Static<S>) {
  return <C extends string, F extends Flags = object>(column: C, flags?: F): Field<C, S, V> & F => ({
    column,
    schema,
    read,
    write,
    ...(flags as F),
  });
}

const text = field(Text, same<string>, same<string>);
const textOrNull = field(NullableText, same<string | null>, same<string | null>);
const int = field(Int, same<number>, same<number>);
const intOrNull = field(NullableInt, same<number | null>, same<number | null>);
/** A boolean kept as INTEGER 0/1 (SQLite has no boolean). */
const flag = field(
  Bit,
  (v) => v !== 0,
  (v: boolean): 0 | 1 => (v ? 1 : 0),
);
/** A JSON document kept as TEXT, parsed on first access only. */
const json = <T>() =>
  field(
    Text,
    (v) => JSON.parse(v) as T,
    (v: T) => JSON.stringify(v),
  );
/** A JSON document kept as TEXT, or NULL. */
const jsonOrNull = <T>() =>
  field(
    NullableText,
    (v): T | null => (v === null ? null : (JSON.parse(v) as T)),
    (v: T | null) => (v === null ? null : JSON.stringify(v)),
  );
/** A list of strings kept as a JSON array; an empty list as NULL. */
const textList = field(
  NullableText,
  (v): readonly string[] => (v === null ? [] : (JSON.parse(v) as string[])),
  (v: readonly string[]) => (v.length > 0 ? JSON.stringify(v) : null),
);
/** The description language; anything else reads as ADL (the default language). */
const format = field(Text, (v): 'adl' | 'xrsl' => (v === 'xrsl' ? 'xrsl' : 'adl'), same<string>);

const change = { change: true } as const;
const insert = { insert: true } as const;
const changeLazy = { change: true, lazy: true } as const;

/** A routed job's route: its name and batch settings at submission (src/jobs/routes.ts). */
export interface StoredRoute {
  readonly name: string;
  readonly partition?: string;
  readonly account?: string;
  readonly qos?: string;
  readonly extraArgs?: readonly string[];
}

export const JOB_FIELDS = {
  id: text('id', insert),
  /**
   * The owner key: the submitter's subject in RFC 4514 form (src/pki/rfc4514.ts), or a
   * bearer token's `<iss>#<sub>`. Every ownership check compares on it.
   */
  owner: text('owner', insert),
  state: text('state', { change: true, insert: true }),
  pending: flag('pending', change),
  restState: text('rest_state', { change: true, insert: true }),
  lrmsState: textOrNull('lrms_state', change),
  /**
   * Why the batch system does not run the job yet, in its words (BatchUpdate `reason`:
   * Slurm's `Resources`, `Priority`, ...); null: none said. Written only when it changes.
   */
  batchReason: textOrNull('batch_reason', change),
  outcome: textOrNull('outcome', change),
  queue: text('queue', insert),
  delegationId: textOrNull('delegation_id', insert),
  format: format('format', insert),
  description: json<JobDescription>()('description', { insert: true, lazy: true }),
  createdAt: int('created_at', insert),
  updatedAt: int('updated_at'),
  /**
   * When the job entered its current position (state, pending, batch state): set by the
   * engine with every change of position. Null until the first change (the job is in
   * ACCEPTED since `createdAt`) and for jobs stored before it was recorded. The metrics'
   * time-in-state histogram reads it, so it keeps nothing per job in memory.
   */
  stateEnteredAt: intOrNull('state_entered_at', change),
  localId: textOrNull('local_id', change),
  exitCode: intOrNull('exit_code', change),
  failedState: textOrNull('failed_state', change),
  failedCause: textOrNull('failed_cause', change),
  failureReason: textOrNull('failure_reason', change),
  killRequested: flag('kill_requested', change),
  cleanRequested: flag('clean_requested', change),
  restartRequested: flag('restart_requested', change),
  rerunsLeft: int('reruns_left', { change: true, insert: true }),
  startedAt: intOrNull('started_at', change),
  endedAt: intOrNull('ended_at', change),
  eraseAt: intOrNull('erase_at', change),
  clientHost: textOrNull('client_host', insert),
  /** Identity of the session directory made at submission; null for jobs stored before it was recorded. */
  sessionIdent: textOrNull('session_ident', insert),
  /** Local account the owner was mapped to at submission (src/authz); null: not mapped. */
  localAccount: textOrNull('local_account', insert),
  /** The owner's verified VOMS FQANs at submission; empty: none. */
  fqans: textList('fqans', insert),
  /**
   * The owner as shown and accounted: the subject's one-line form (`/O=../CN=..`), or the
   * token's `<iss>#<sub>`. Never compared for ownership (a one-line form can be ambiguous).
   */
  ownerDn: text('owner_dn', insert),
  /**
   * The route the job took at submission (src/jobs/routes.ts JobRoute: its name and batch
   * settings as then configured, so a reload keeps the job on it); null: no routes.
   */
  route: jsonOrNull<StoredRoute>()('route', insert),
  /** The description's job name (xRSL jobname, ADL Name); '' when it has none. Listed and searched by the web interface. */
  name: text('name', insert),
  engine: json<Readonly<Record<string, unknown>>>()('engine', changeLazy),
  version: int('version'),
} as const;

export type JobFields = typeof JOB_FIELDS;
