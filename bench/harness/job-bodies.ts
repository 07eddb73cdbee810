/**
 * Job descriptions and id lists the scenarios send.
 *
 * Two kinds of job:
 *  - trivial: runs /bin/true and ends; what submission, latency and drain measure;
 *  - running: runs /bin/sleep 3600, so it stays RUNNING in the batch system while
 *    measured (memory with jobs in progress); the store's clean kills it.
 *  - parked: also runs /bin/true, but declares an input file the client is to upload
 *    ("wait.txt" with an empty source) and never uploads it, so the job waits in
 *    PREPARING and costs the service nothing after it has been accepted. Stores of
 *    100,000 jobs are filled with these: the store stays still while it is measured,
 *    and no endpoint has to run 100,000 processes first.
 *
 * Several descriptions in one body (spec §4.3 rule 2): xRSL joined with `+`, ADL inside
 * one `<ActivityDescriptions>`; A-REX 6.17 accepts both.
 */

export type JobKind = 'trivial' | 'parked' | 'running';
export type DescriptionFormat = 'xrsl' | 'adl';

const ADL_NS = 'http://www.eu-emi.eu/es/2010/12/adl';

/** Job names contain only [A-Za-z0-9-]; nothing needs quoting. */
function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9-]/g, '-');
}

export function xrslJob(kind: JobKind, name: string): string {
  if (kind === 'running') return `&(executable="/bin/sleep")(arguments="3600")(jobname="${safeName(name)}")`;
  const park = kind === 'parked' ? '(inputfiles=("wait.txt" ""))' : '';
  return `&(executable="/bin/true")(jobname="${safeName(name)}")${park}`;
}

export function adlJob(kind: JobKind, name: string): string {
  if (kind === 'running')
    return (
      `<ActivityDescription xmlns="${ADL_NS}"><ActivityIdentification><Name>${safeName(name)}</Name></ActivityIdentification>` +
      `<Application><Executable><Path>/bin/sleep</Path><Argument>3600</Argument></Executable></Application></ActivityDescription>`
    );
  const park = kind === 'parked' ? '<DataStaging><InputFile><Name>wait.txt</Name></InputFile></DataStaging>' : '';
  return (
    `<ActivityDescription xmlns="${ADL_NS}"><ActivityIdentification><Name>${safeName(name)}</Name></ActivityIdentification>` +
    `<Application><Executable><Path>/bin/true</Path></Executable></Application>${park}</ActivityDescription>`
  );
}

/** One description (a single-job submission). */
export function singleBody(format: DescriptionFormat, kind: JobKind, name: string): string {
  return format === 'adl' ? adlJob(kind, name) : xrslJob(kind, name);
}

/** `count` descriptions in one body, named `${prefix}-0` ... */
export function bulkBody(format: DescriptionFormat, kind: JobKind, count: number, prefix: string): string {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`job count must be a positive integer, not ${count}`);
  const parts: string[] = [];
  for (let i = 0; i < count; i++) {
    parts.push(format === 'adl' ? adlJob(kind, `${prefix}-${i}`) : `(${xrslJob(kind, `${prefix}-${i}`)})`);
  }
  // A single xRSL job still goes through the multi-job syntax, so a bulk of one
  // exercises the same parser path as a bulk of 1,000.
  return format === 'adl' ? `<ActivityDescriptions>${parts.join('')}</ActivityDescriptions>` : `+${parts.join('')}`;
}

/** JSON job id list for the bulk actions: `{"job":[{"id":"..."}]}`. */
export function idListJson(ids: readonly string[]): string {
  return JSON.stringify({ job: ids.map((id) => ({ id })) });
}

/** Splits a list into chunks of at most `size` (bulk calls are bounded on every endpoint). */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size must be a positive integer, not ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
