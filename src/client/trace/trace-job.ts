/**
 * The jobs a trace submits and how it follows them: a tiny xRSL job (`/bin/echo` of a
 * random marker into `out.txt`, kept for download), its dry-run twin, and the polling
 * of their state until a final one, each change reported with its time.
 */
import { performance } from 'node:perf_hooks';
import { ENDED_REST_STATES } from '../../vocabulary/job-states.js';
import type { RestClient } from '../rest-client.js';
import { jobItems, restStateOf, textsOf, textOf, type JobItem, type Json } from '../rest-answers.js';
import { expectStatus } from './http-judgement.js';
import { StepFailure } from './step.js';

/** The REST states a job ends in (the vocabulary's: a client speaks the same interface). */
export const FINAL_STATES: ReadonlySet<string> = new Set<string>(ENDED_REST_STATES);
export const OUTPUT_FILE = 'out.txt';
export const ERROR_FILE = 'err.txt';

export interface TraceJobSpec {
  readonly marker: string;
  readonly queue: string;
  readonly delegationId?: string | undefined;
  readonly dryRun?: boolean;
  /** Relations the caller adds (`--xrsl`), written by the caller: the service judges them. */
  readonly extra?: string | undefined;
}

/** xRSL quoting: a value in double quotes, a double quote doubled. */
function q(v: string): string {
  return `"${v.replace(/"/g, '""')}"`;
}

export function traceJobXrsl(s: TraceJobSpec): string {
  return [
    '&',
    `(executable="/bin/echo")(arguments=${q(s.marker)})`,
    `(stdout="${OUTPUT_FILE}")(stderr="${ERROR_FILE}")`,
    `(outputfiles=("${OUTPUT_FILE}" "")("${ERROR_FILE}" ""))`,
    `(jobname=${q(s.dryRun === true ? 'ceres-trace-dry-run' : 'ceres-trace')})`,
    `(queue=${q(s.queue)})`,
    s.delegationId === undefined ? '' : `(delegationid=${q(s.delegationId)})`,
    s.dryRun === true ? '(dryrun="yes")' : '',
    s.extra ?? '',
  ].join('');
}

export function idsBody(ids: readonly string[]): string {
  return JSON.stringify({ job: ids.map((id) => ({ id })) });
}

/** Submits one description; the new job's id, or the service's refusal as a StepFailure. */
export async function submitJob(c: RestClient, xrsl: string, identity: string, signal: AbortSignal): Promise<string> {
  const a = expectStatus(
    await c.rest('POST', 'jobs?action=new', { body: xrsl, contentType: 'application/rsl', signal }),
    [201],
    'POST jobs?action=new',
    identity,
  );
  const item = jobItems(a.body.toString('utf8'))[0];
  if (item === undefined) throw new StepFailure('POST jobs?action=new answered 201 without a job item');
  if (item.status !== 201 || item.id === undefined) {
    const said = `${Number.isNaN(item.status) ? '?' : item.status} ${item.reason}`.trim();
    if (item.status === 403)
      throw new StepFailure(
        `the service refuses the job of ${identity}: ${said}`,
        "the site's authorization or routes do not admit this identity (or this queue): ask the site's administrators",
      );
    throw new StepFailure(`the service refuses the job: ${said}`);
  }
  return item.id;
}

export interface StateChange {
  readonly state: string;
  /** Milliseconds since following began. */
  readonly atMs: number;
}

/** Polls the job's state until a final one (or the signal ends the step); each change goes to `onState`. */
export async function followJob(
  c: RestClient,
  id: string,
  identity: string,
  signal: AbortSignal,
  onState: (s: StateChange) => void,
): Promise<{ state: string; changes: StateChange[] }> {
  const t0 = performance.now();
  const changes: StateChange[] = [];
  let last: string | undefined;
  let waitMs = 100;
  for (;;) {
    const item = await actionItem(c, 'status', id, identity, signal);
    if (item === undefined || item.status !== 200 || item.state === undefined)
      throw new StepFailure(
        `the status of job ${id}: ${item === undefined ? 'no item' : `${item.status} ${item.reason}`}`,
      );
    if (item.state !== last) {
      last = item.state;
      const change = { state: item.state, atMs: performance.now() - t0 };
      changes.push(change);
      onState(change);
    }
    if (FINAL_STATES.has(item.state)) return { state: item.state, changes };
    // Quick at first (a fork job ends in well under a second), then every 2 s at most.
    await sleep(waitMs, signal);
    waitMs = Math.min(2000, waitMs * 1.5);
  }
}

/**
 * The item of one job in the answer to `POST jobs?action=ACTION` (A-REX and Ceres answer
 * 201; 200 is taken too).
 */
async function actionItem(
  c: RestClient,
  action: string,
  id: string,
  identity: string,
  signal: AbortSignal,
): Promise<JobItem | undefined> {
  const a = expectStatus(
    await c.rest('POST', `jobs?action=${action}`, { body: idsBody([id]), contentType: 'application/json', signal }),
    [200, 201],
    `POST jobs?action=${action}`,
    identity,
  );
  return jobItems(a.body.toString('utf8'))[0];
}

/** The job's ComputingActivity (`POST jobs?action=info`). */
export async function activityOf(c: RestClient, id: string, identity: string, signal: AbortSignal): Promise<Json> {
  const item = await actionItem(c, 'info', id, identity, signal);
  if (item?.activity === undefined)
    throw new StepFailure(
      `the info document of job ${id}: ${item === undefined ? 'no item' : `${item.status} ${item.reason}`}`,
    );
  return item.activity;
}

export interface JobFacts {
  readonly state: string | undefined;
  readonly exitCode: string | undefined;
  readonly errors: readonly string[];
  readonly localOwner: string | undefined;
  readonly queue: string | undefined;
  readonly node: string | undefined;
}

export function jobFacts(activity: Json): JobFacts {
  return {
    state: restStateOf(activity),
    exitCode: textOf(activity.ExitCode),
    errors: textsOf(activity.Error),
    localOwner: textOf(activity.LocalOwner),
    queue: textOf(activity.Queue),
    node: textsOf(activity.ExecutionNode)[0],
  };
}

/** A file of the job's session directory; undefined when the service has none to give. */
export async function sessionFile(
  c: RestClient,
  id: string,
  name: string,
  signal: AbortSignal,
): Promise<{ status: number; text: string }> {
  const a = await c.rest('GET', `jobs/${encodeURIComponent(id)}/session/${name}`, { accept: '*/*', signal });
  return { status: a.status, text: a.body.toString('utf8') };
}

/** The last lines of the job's error log (`diagnose/errors`), where the service keeps one. */
export async function errorLog(c: RestClient, id: string, signal: AbortSignal, lines = 2): Promise<string[]> {
  const a = await c.rest('GET', `jobs/${encodeURIComponent(id)}/diagnose/errors`, { accept: '*/*', signal });
  if (a.status !== 200) return [];
  return a.body
    .toString('utf8')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l !== '')
    .slice(-lines);
}

/** Cleans a job (`POST jobs?action=clean`); the item's status and reason. */
export function cleanJob(c: RestClient, id: string, signal: AbortSignal): Promise<{ status: number; reason: string }> {
  return jobAction(c, 'clean', id, signal);
}

/** Kills a job (`POST jobs?action=kill`); the item's status and reason. */
export function killJob(c: RestClient, id: string, signal: AbortSignal): Promise<{ status: number; reason: string }> {
  return jobAction(c, 'kill', id, signal);
}

async function jobAction(
  c: RestClient,
  action: 'clean' | 'kill',
  id: string,
  signal: AbortSignal,
): Promise<{ status: number; reason: string }> {
  const a = await c.rest('POST', `jobs?action=${action}`, {
    body: idsBody([id]),
    contentType: 'application/json',
    signal,
  });
  const item = jobItems(a.body.toString('utf8'))[0];
  return item === undefined ? { status: a.status, reason: a.reason } : { status: item.status, reason: item.reason };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
