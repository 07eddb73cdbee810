/**
 * A job as stored: the record type, the row type, the column list and the mapping
 * between row and record, all derived from the field table (job-fields.ts). The engine
 * owns the meaning of `state`/`pending`/`lrmsState`/`outcome` (src/engine/states.ts,
 * names in src/vocabulary/job-states.ts); the store only persists them and
 * compares-and-sets on `version`.
 *
 * A row is checked against the column types once, when it is read: a column the table
 * names but the database lacks (a missing migration) or holding another type fails
 * loudly there, with the job and the column, instead of as an odd value later.
 */
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ceError } from '../errors/ce-error.js';
import { JOB_FIELDS, type Field, type JobFields } from './job-fields.js';

type ValueOf<F> = F extends { readonly read: (v: never) => infer V } ? V : never;
type KeysWith<Flag extends string> = {
  [K in keyof JobFields]: JobFields[K] extends Record<Flag, true> ? K : never;
}[keyof JobFields];

export type JobRecord = { readonly [K in keyof JobFields]: ValueOf<JobFields[K]> };

export type JobRow = { [K in keyof JobFields as JobFields[K]['column']]: Static<JobFields[K]['schema']> };

/** Fields a transition may change (everything but identity and submission data). */
export type JobChanges = { [K in KeysWith<'change'>]?: ValueOf<JobFields[K]> };

/** The fields a submission stores (job-store.ts `NewJob` adds what is not a record field). */
export type InsertedFields = { [K in KeysWith<'insert'>]: ValueOf<JobFields[K]> };

type Key = keyof JobFields;
const KEYS = Object.keys(JOB_FIELDS) as Key[];
const fieldOf = (k: Key): Field => JOB_FIELDS[k] as unknown as Field;

/**
 * Every column of the record, for SELECT and RETURNING. The description text as
 * submitted (`raw`, up to megabytes) is not a record field: the engine and the bulk
 * actions read records constantly and never need it (JobStore.rawDescription).
 */
export const COLUMNS = KEYS.map((k) => JOB_FIELDS[k].column).join(', ');

export const columnOf = Object.fromEntries(KEYS.map((k) => [k, JOB_FIELDS[k].column])) as {
  readonly [K in Key]: JobFields[K]['column'];
};

export const INSERTED_KEYS = KEYS.filter((k) => 'insert' in JOB_FIELDS[k]) as (keyof InsertedFields)[];

/** A record value as its column holds it. */
export function toColumn<K extends Key>(k: K, v: ValueOf<JobFields[K]>): unknown {
  return fieldOf(k).write(v);
}

const rowCheck = TypeCompiler.Compile(
  Type.Object(Object.fromEntries(KEYS.map((k) => [JOB_FIELDS[k].column, JOB_FIELDS[k].schema]))),
);

/**
 * The row → record mapping, generated once from the table: one object literal with
 * the record's fields in table order, JSON columns (`lazy`) as getters that parse on
 * first access (most reads: status, listing, the scheduler's checks, never look at the
 * description). A literal keeps every record one object shape and costs what the
 * hand-written mapping did; building the object field by field with accessors defined
 * one at a time was five times slower on this path, which every job read takes.
 * The generated text holds only the table's own keys and column names (checked below).
 */
const mapRow = ((): ((r: JobRow) => JobRecord) => {
  const reads = KEYS.map((k) => fieldOf(k).read);
  const parts = KEYS.map((k, i) => {
    const f = fieldOf(k);
    if (!/^[A-Za-z]\w*$/.test(k) || !/^[a-z_]+$/.test(f.column)) throw new Error(`job field ${k}: not a plain name`);
    return 'lazy' in f
      ? `get ${k}() { return (lazy${i} ??= read[${i}](r.${f.column})); }`
      : `${k}: read[${i}](r.${f.column})`;
  });
  const lazies = KEYS.flatMap((k, i) => ('lazy' in fieldOf(k) ? [`lazy${i}`] : []));
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- see above: table-made text, no input
  const make = new Function('read', `return (r) => { let ${lazies.join(', ')}; return { ${parts.join(', ')} }; };`) as (
    read: readonly ((v: never) => unknown)[],
  ) => (r: JobRow) => JobRecord;
  return make(reads);
})();

/** Row → record, after checking the row's column types (once per read). */
export function fromRow(r: JobRow): JobRecord {
  if (!rowCheck.Check(r)) {
    const e = rowCheck.Errors(r).First();
    throw ceError(
      'CE_ERR_STORE_BAD_ROW',
      `job ${String((r as { id?: unknown }).id)}: column ${e?.path.slice(1) ?? '?'}: ${e?.message ?? 'invalid'}`,
    );
  }
  return mapRow(r);
}
