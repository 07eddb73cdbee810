/**
 * `{base}/jobs` (spec §4.3): GET|HEAD lists the caller's jobs (optional `state=` filter),
 * POST with `action=new` submits, with `info|status|kill|clean|restart|delegations`
 * acts on a job id list. Overall status 201 for every POST action, as A-REX and the
 * clients expect (arcstat requires 201 even for info).
 *
 * `action=info` has its own, lower id cap: an info item is a whole GLUE2 activity
 * document (~1.5 KB rendered, much more while built), so 100,000 of them would be
 * hundreds of MB held at once; status lists stay long (aCT polls them by the 10,000).
 */
import { ceError } from '../../../errors/ce-error.js';
import { readBody } from '../../../http/body.js';
import { contentTypeOf, wantsEventStream } from '../../../http/negotiate.js';
import { sendRendered } from '../../../http/send.js';
import { sendStream } from '../../../http/send-stream.js';
import type { ItemResult, JobService } from '../../../jobs/job-service.js';
import type { BulkItem, JobActions, Viewer } from '../../../jobs/job-actions.js';
import { catalog } from '../../../errors/catalog.js';
import type { Resource, RestRequest } from '../resource.js';
import type { Caller } from '../../../http/caller.js';
import { callerSubmitOptions } from '../../submit-options.js';
import { answerEach, parseIdList, type IdEntry } from './id-list.js';
import { bulkPieces, listPieces, renderBulk } from './render.js';
import { statusAnswer } from './status-answer.js';
import { sequenceNumber, type EventStreams } from './event-stream.js';
import type { EventFeed } from '../../../jobs/event-feed.js';
import type { RestState } from '../../../vocabulary/job-states.js';
import { monitoredVo } from '../../../authz/monitors.js';
import { cursorAfter, NEXT_CURSOR_HEADER, parseListQuery, usesListExtension } from './list-query.js';

export interface JobsResourceOptions {
  readonly jobs: JobService;
  readonly actions: JobActions;
  readonly restStates: readonly string[];
  readonly maxIdsPerRequest: number;
  /** Cap for `action=info` alone (default 1,000): each of its items is a whole activity document. */
  readonly maxInfoIdsPerRequest?: number;
  readonly maxControlBodyBytes: number;
  readonly maxSubmitBodyBytes: number;
  /** The delegation holding a token caller's token, used by its jobs that name none (absent: none). */
  readonly callerDelegation?: (caller: Caller) => Promise<string | undefined>;
  /** Job event streams (`Accept: text/event-stream` on GET); absent: that Accept answers as before. */
  readonly streams?: EventStreams;
  /** The jobs that changed after an event (`since=` of status and info); absent: `since` is ignored. */
  readonly changedSince?: EventFeed['changedSince'];
}

const ACTIONS = ['new', 'info', 'status', 'kill', 'clean', 'restart', 'delegations'] as const;
type Action = (typeof ACTIONS)[number];

export function jobsResource(o: JobsResourceOptions): Resource {
  const list = (req: RestRequest) => {
    // A Ceres extension: only this Accept value streams; every other GET answers as ever.
    if (o.streams !== undefined && req.method === 'GET' && wantsEventStream(req.raw.headers.accept))
      return o.streams.open(req);
    const caller = req.caller();
    const filter = req.query.get('state');
    let states: RestState[] | undefined;
    if (filter !== undefined) {
      states = filter
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '') as RestState[];
      const bad = states.find((s) => !o.restStates.includes(s));
      if (bad !== undefined)
        throw ceError(
          'CE_ERR_JOB_BAD_STATE_FILTER',
          `unknown job state '${bad.slice(0, 32)}' (known: ${o.restStates.join(', ')})`,
        );
    }
    const monitor = req.query.get('monitor');
    if (monitor === undefined && !usesListExtension(req.query))
      // Streamed: a pilot factory's DN may own 100,000 jobs.
      return sendStream(
        req.reply,
        200,
        contentTypeOf[req.format],
        listPieces(o.jobs.list(caller.owner, states), req.format),
      );
    // A Ceres extension: filters, a page, or a monitor's view of a VO's jobs.
    const q = parseListQuery(req.query, states, o.maxIdsPerRequest);
    const scope = monitor === undefined ? { owner: caller.owner } : { vo: monitoredVo(caller, monitor) };
    // vo= and monitor= both hold: naming two VOs matches nothing.
    const jobs =
      q.vo !== undefined && monitor !== undefined && q.vo !== scope.vo ? [] : o.jobs.listFiltered({ ...q, ...scope });
    const last = jobs[jobs.length - 1];
    if (q.limit !== undefined && jobs.length === q.limit && last !== undefined)
      void req.reply.header(NEXT_CURSOR_HEADER, cursorAfter(last.id));
    return sendStream(req.reply, 200, contentTypeOf[req.format], listPieces(jobs, req.format));
  };

  /**
   * A job the caller only monitors is not "not found" to it: an action on it (kill, clean,
   * restart, delegations) answers the monitor's 403 (src/authz/monitors.ts).
   */
  const onlyMonitored = (caller: Caller, items: BulkItem[]): BulkItem[] =>
    caller.monitors === undefined
      ? items
      : items.map((it) =>
          it.status === 404 && o.jobs.onlyMonitors(caller.monitors, it.id)
            ? { status: 403, reason: catalog.CE_ERR_JOB_MONITOR_READ_ONLY.message, id: it.id }
            : it,
        );

  const post = async (req: RestRequest) => {
    const caller = req.caller();
    const action = req.query.get('action');
    if (action === undefined || action === '')
      throw ceError('CE_ERR_HTTP_ACTION_MISSING', `missing action parameter (one of ${ACTIONS.join(', ')})`);
    if (!(ACTIONS as readonly string[]).includes(action))
      throw ceError('CE_ERR_HTTP_ACTION_UNKNOWN', `unknown action '${action.slice(0, 32)}'`);
    const a = action as Action;
    if (a === 'new') {
      const body = await readBody(req.raw, o.maxSubmitBodyBytes);
      const is11 = req.version === '1.1';
      // A token caller's job without a delegation of its own gets the token (auth/token/job-credential.ts).
      const delegationId =
        (is11 ? nonEmpty(req.query.get('delegation_id')) : undefined) ?? (await o.callerDelegation?.(caller));
      const results = await o.jobs.submit(caller.owner, body, {
        ...callerSubmitOptions(caller),
        queue: is11 ? nonEmpty(req.query.get('queue')) : undefined,
        delegationId,
        instances: is11 ? intParam(req.query.get('instances')) : undefined,
        instancesMin: is11 ? intParam(req.query.get('instances_min')) : undefined,
        clientHost: req.raw.socket.remoteAddress,
      });
      return sendRendered(req.reply, req.format, 201, renderBulk(results, req.format), 'Created');
    }
    const body = await readBody(req.raw, o.maxControlBodyBytes);
    const max = a === 'info' ? Math.min(o.maxIdsPerRequest, o.maxInfoIdsPerRequest ?? 1000) : o.maxIdsPerRequest;
    let entries = parseIdList(body, req.raw.headers['content-type'], max);
    const reading = a === 'status' || a === 'info';
    // A Ceres extension: a monitor reads the states and documents of its VO's jobs.
    const monitor = reading ? req.query.get('monitor') : undefined;
    const vo = monitor === undefined ? undefined : monitoredVo(caller, monitor);
    const viewer: Viewer = vo === undefined ? caller.owner : { vo };
    const since = req.query.get('since');
    if (since !== undefined && reading && o.changedSince !== undefined) {
      // A Ceres extension: the caller's jobs that changed after that event, and where to go on.
      if (entries.length > 0) throw ceError('CE_ERR_JOB_BAD_SINCE', 'since= answers for an empty id list only');
      const changed = o.changedSince(caller.owner, sequenceNumber(since, 'CE_ERR_JOB_BAD_SINCE'), max, vo);
      if (changed === 'relist') throw ceError('CE_ERR_JOB_SINCE_EXPIRED');
      entries = changed.ids;
      void req.reply.header('ceres-sequence', String(changed.next));
    }
    if (a === 'info') {
      // Streamed: each item's document is built when the one before it has been sent. An
      // info item always carries info_document (empty when failed), as A-REX answers.
      const info = o.actions.infoOf(
        viewer,
        entries.filter((e): e is string => typeof e === 'string'),
        req.format,
      );
      const one = (e: IdEntry): BulkItem | ItemResult =>
        typeof e === 'string' ? info(e) : { status: 400, reason: e.reason, infoDocument: null };
      req.reply.raw.statusMessage = 'Created';
      return sendStream(req.reply, 201, contentTypeOf[req.format], bulkPieces(mapLazy(entries, one), req.format));
    }
    if (a === 'status' && req.format !== 'html') {
      // Written straight from the id list (status-answer.ts): the common poll of aCT and arcstat.
      const answer = statusAnswer(entries, (id) => o.actions.stateOf(viewer, id), req.format);
      return sendRendered(req.reply, req.format, 201, answer, 'Created');
    }
    const items = answerEach<BulkItem | ItemResult>(
      entries,
      (ids) =>
        a === 'status' ? o.actions.status(viewer, ids) : onlyMonitored(caller, o.actions[a](caller.owner, ids)),
      (reason) => ({ status: 400, reason }),
    );
    return sendRendered(req.reply, req.format, 201, renderBulk(items, req.format), 'Created');
  };

  return { methods: { GET: list, POST: post } };
}

function* mapLazy<T, U>(xs: readonly T[], f: (x: T) => U): Generator<U> {
  for (const x of xs) yield f(x);
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s === '' ? undefined : s;
}

/** A-REX ignores non-numeric instance counts (keeps the default); so do we. */
function intParam(s: string | undefined): number | undefined {
  if (s === undefined || !/^\s*-?\d{1,9}\s*$/.test(s)) return undefined;
  return Number(s);
}
