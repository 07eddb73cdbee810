/**
 * `GET {base}/jobs` with `Accept: text/event-stream`: the caller's job changes as
 * Server-Sent Events (a Ceres extension, docs/compatibility.md), fed by the durable event
 * sequence (src/jobs/event-feed.ts). Each event is
 *
 *   id: <seq>            the durable sequence number: Last-Event-ID resumes after it
 *   event: state
 *   data: {"id":..,"state":..,"previous_state":..,"time":..[,"exit_code":..,"failure_reason":..]}
 *
 * plus `event: relist` (the resume point is older than what is kept, or newer than the
 * newest: list the jobs again, then follow from the id it carries) and a last `event: end`
 * with the reason when the service ends the stream (slow-reader, credential-expired,
 * not-authorized, service-stopping). Comment lines are heartbeats.
 *
 * `batch=<ms>` (a Ceres extension for clients that follow many jobs and need no
 * milliseconds): events are gathered for up to that long and written together; each keeps
 * its own lines, so any SSE client and Last-Event-ID work as without it.
 *
 * Authorization is that of the list: the feed hands a stream only its owner's events, so an
 * `id=` filter naming others' jobs simply never matches. It is asked again at every
 * heartbeat and at once after a reload (`recheckAll`): a stream lasts for days, and a
 * caller whose authorization goes (a grid-mapfile line taken out, a revoked certificate,
 * the group that made it a VO's monitor) must not keep following what it may no longer
 * list; its stream ends with `not-authorized`. Streams are counted per identity
 * against their own limit, not as requests in progress (http/fairness.ts `leaveInFlight`).
 * The body is a Readable that Fastify pipes with backpressure: what it holds plus what the
 * socket holds is the stream's backlog, and past the bound the feed ends the stream.
 */
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import type { FastifyReply } from 'fastify';
import { ceError } from '../../../errors/ce-error.js';
import { leaveInFlight } from '../../../http/fairness.js';
import type { EventFeed, FeedItem, Follower } from '../../../jobs/event-feed.js';
import type { JobEvent } from '../../../store/job-events.js';
import type { RestRequest } from '../resource.js';
import type { Caller } from '../../../http/caller.js';
import { monitoredVo, monitors } from '../../../authz/monitors.js';

export type EndReason = 'slow-reader' | 'credential-expired' | 'not-authorized' | 'service-stopping';

export interface EventStreamOptions {
  readonly feed: EventFeed;
  readonly restStates: readonly string[];
  /** Read at each new stream (reloadable). */
  readonly limits: () => { readonly maxStreamsPerIdentity: number; readonly heartbeatSeconds: number };
  /** Most ids an `id=` filter may name. */
  readonly maxIds: number;
  /** The backlog bound (the feed's): a heartbeat never grows a backlog past it either. */
  readonly maxBuffered: number;
  /**
   * The caller of a stream's request as authentication and authorization see it now
   * (undefined: refused), asked at every heartbeat and by `recheckAll`.
   */
  readonly recheck?: (req: IncomingMessage) => Promise<Caller | undefined>;
}

export interface EventStreams {
  /**
   * Answers `req` with a stream (throws a CeError for bad input or over the limit). Returns
   * the reply: an async handler must return it, or Fastify, while onSend hooks still run,
   * takes the handler's `undefined` for an empty answer.
   */
  open(req: RestRequest): FastifyReply;
  /** Streams open now (the metrics gauge). */
  count(): number;
  /** Ends every stream with `service-stopping` (before a graceful close, which waits for answers). */
  endAll(): void;
  /** Asks every stream's authorization again now (after a reload), ending those refused. */
  recheckAll(): void;
}

/** Longest a timer may be set for (Node caps at 2^31-1 ms and fires at once beyond). */
const MAX_TIMER_MS = 0x7fffffff;

export function eventStreams(o: EventStreamOptions): EventStreams {
  const perOwner = new Map<string, number>();
  const ends = new Set<(r: EndReason) => void>();
  const rechecks = new Set<() => void>();

  const open = (req: RestRequest): FastifyReply => {
    const caller = req.caller();
    const resume = resumePoint(req);
    const states = listParam(req.query.get('state'), 64);
    const bad = states?.find((s) => !o.restStates.includes(s));
    if (bad !== undefined)
      throw ceError(
        'CE_ERR_JOB_BAD_STATE_FILTER',
        `unknown job state '${bad.slice(0, 32)}' (known: ${o.restStates.join(', ')})`,
      );
    const ids = listParam(req.query.get('id'), o.maxIds);
    const batchMs = batchPeriod(req.query.get('batch'));
    // A Ceres extension: a monitor follows its VO's jobs (src/authz/monitors.ts).
    const m = req.query.get('monitor');
    const monitor = m === undefined ? undefined : monitoredVo(caller, m);
    const { maxStreamsPerIdentity, heartbeatSeconds } = o.limits();
    const held = perOwner.get(caller.owner) ?? 0;
    if (held >= maxStreamsPerIdentity)
      throw ceError(
        'CE_ERR_JOB_TOO_MANY_STREAMS',
        `this identity has ${held} event streams open (limit ${maxStreamsPerIdentity})`,
        { headers: { 'retry-after': '5' } },
      );
    perOwner.set(caller.owner, held + 1);
    // A stream is not a request in progress: it may last for days (http/fairness.ts).
    leaveInFlight(req.raw);

    // Text, not bytes: a string pushed into a byte stream becomes a small Buffer cut from
    // a shared 8 KiB slab, and one unread chunk keeps its whole slab alive, with the chunks
    // of every other stream cut from it. A thousand streams with backlogs held twice what
    // their bounds counted (the service grew to 2.4 GB: docs/performance.md). A string is
    // its own, and counts as what it holds.
    const body = new Readable({ read() {}, encoding: 'utf8' });
    const res = req.reply.raw;
    let closed = false;
    // What one turn hands over goes out as one chunk: the feed hands a stream every event
    // of a read in one go, and each chunk is a write through HTTP, TLS and a system call.
    // With `batch=<ms>` the text is gathered for up to that long from the first event held
    // (or until it reaches half the backlog bound, so gathering alone never ends a stream
    // as slow: it goes out early, nothing is dropped); a heartbeat or the end takes it along.
    let pending = '';
    let gathering: NodeJS.Timeout | undefined;
    /** Whether anything went out since the last heartbeat tick (then no heartbeat is needed). */
    let wrote = false;
    const flush = (): void => {
      clearTimeout(gathering);
      gathering = undefined;
      const text = pending;
      pending = '';
      if (!closed && text !== '') {
        wrote = true;
        body.push(text);
      }
    };
    // `at`: when the change was stored. The period runs from the oldest change held, not
    // from its hand-over: the feed reads a batched stream's changes late on purpose (one
    // read per period, event-feed.ts `delayMs`), and what it hands over already waited.
    const write = (text: string, at?: number): void => {
      if (closed) return;
      const first = pending === '';
      pending += text;
      if (batchMs === 0) {
        if (first) queueMicrotask(flush);
      } else if (pending.length >= o.maxBuffered / 2) flush();
      else if (first) {
        const waited = at === undefined ? 0 : Math.max(0, Date.now() - at);
        gathering = setTimeout(flush, Math.max(0, batchMs - waited));
        gathering.unref();
      }
    };
    const end = (reason: EndReason): void => {
      if (closed) return;
      const text = `${pending}event: end\ndata: ${JSON.stringify({ reason })}\n\n`;
      pending = '';
      finish();
      body.push(text);
      body.push(null);
    };
    const follower: Follower = {
      owner: caller.owner,
      ...(monitor !== undefined ? { monitor } : {}),
      ...(ids !== undefined ? { ids: new Set(ids) } : {}),
      ...(states !== undefined ? { states: new Set(states) } : {}),
      ...(batchMs !== 0 ? { delayMs: batchMs } : {}),
      send: (item) => write(sse(item), item.kind === 'state' ? item.event.at : undefined),
      buffered: () => pending.length + body.readableLength + res.writableLength,
      end,
    };
    // Still the same owner, still allowed to list, still the VO's monitor if it follows one.
    const recheck = (): void => {
      void o
        .recheck?.(req.raw)
        .catch(() => undefined)
        .then((now) => {
          if (now === undefined || now.owner !== caller.owner || (monitor !== undefined && !monitors(now, monitor)))
            end('not-authorized');
        });
    };
    // Heartbeats keep proxies from closing a quiet stream; to a client that never reads
    // they would add up, so the backlog bound holds for them as for events. A stream that
    // wrote since the last tick is not quiet: any bytes keep a proxy open, and a heartbeat
    // would be a write (through HTTP, TLS and a system call on both sides) for nothing.
    // Authorization is asked again at every tick, busy or quiet: a stream that keeps
    // delivering must not outlive its caller's authorization either.
    const heartbeat = setInterval(() => {
      if (follower.buffered() > o.maxBuffered) return end('slow-reader');
      recheck();
      if (wrote) wrote = false;
      else {
        write(': heartbeat\n\n');
        if (batchMs !== 0) flush();
      }
    }, heartbeatSeconds * 1000);
    heartbeat.unref();
    let expiry: NodeJS.Timeout | undefined;
    const armExpiry = (): void => {
      if (caller.notAfter === undefined) return;
      const left = caller.notAfter.getTime() - Date.now();
      if (left <= 0) return end('credential-expired');
      expiry = setTimeout(
        left > MAX_TIMER_MS ? armExpiry : () => end('credential-expired'),
        Math.min(left, MAX_TIMER_MS),
      );
      expiry.unref();
    };
    let unfollow = (): void => {};
    const finish = (): void => {
      if (closed) return;
      closed = true;
      unfollow();
      clearInterval(heartbeat);
      clearTimeout(expiry);
      clearTimeout(gathering);
      ends.delete(end);
      rechecks.delete(recheck);
      const n = (perOwner.get(caller.owner) ?? 1) - 1;
      if (n <= 0) perOwner.delete(caller.owner);
      else perOwner.set(caller.owner, n);
    };
    // The client went away (Fastify destroys the body) or the answer ended.
    body.once('close', finish);
    res.once('close', finish);
    ends.add(end);
    rechecks.add(recheck);

    req.reply
      .code(200)
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      // Proxies that buffer answers (nginx) pass this one on as it comes.
      .header('x-accel-buffering', 'no');
    // The first bytes send the headers: the client knows at once that it is following.
    const whose = monitor === undefined ? oneLine(caller.dn) : `VO ${monitor}`;
    write(`retry: 5000\n: following the jobs of ${whose}\n\n`);
    if (batchMs !== 0) flush();
    const reply = req.reply.send(body);
    if (resume !== undefined && o.feed.check(resume) === 'future') {
      // Never given out here (a restored database, another service's id): the client lists again.
      write(sse({ kind: 'relist', seq: o.feed.latest(), prunedThrough: resume }));
      unfollow = o.feed.follow(follower);
    } else unfollow = o.feed.follow(follower, resume);
    armExpiry();
    return reply;
  };

  return {
    open,
    count: () => ends.size,
    endAll: () => {
      // The changes a gathering stream's wake has not read yet go out with the end too.
      o.feed.flush();
      for (const e of [...ends]) e('service-stopping');
    },
    recheckAll: () => {
      for (const r of rechecks) r();
    },
  };
}

/** Last-Event-ID from the header (EventSource sends it) or the query; absent: from now on. */
function resumePoint(req: RestRequest): number | undefined {
  const h = req.raw.headers['last-event-id'];
  const raw = (typeof h === 'string' && h.trim() !== '' ? h : undefined) ?? req.query.get('last_event_id');
  if (raw === undefined || raw.trim() === '') return undefined;
  return sequenceNumber(raw, 'CE_ERR_JOB_BAD_RESUME_POINT');
}

/** An event sequence number from a client: a non-negative safe integer, nothing else. */
export function sequenceNumber(raw: string, code: 'CE_ERR_JOB_BAD_RESUME_POINT' | 'CE_ERR_JOB_BAD_SINCE'): number {
  const t = raw.trim();
  const n = /^\d{1,16}$/.test(t) ? Number(t) : NaN;
  if (!Number.isSafeInteger(n)) throw ceError(code, `'${t.slice(0, 32)}' is not an event id (a non-negative integer)`);
  return n;
}

/** Longest `batch=` period: a minute, the period of the polling a stream replaces. */
export const MAX_BATCH_MS = 60_000;

/**
 * `batch=<ms>` (a Ceres extension): how long the stream may gather events before it writes
 * them out together, 0 to MAX_BATCH_MS; absent: 0, every read's events go out at once.
 */
function batchPeriod(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const t = raw.trim();
  const n = /^\d{1,6}$/.test(t) ? Number(t) : NaN;
  if (!(n <= MAX_BATCH_MS))
    throw ceError(
      'CE_ERR_JOB_BAD_BATCH',
      `batch='${t.slice(0, 32)}' is not a period in milliseconds from 0 to ${MAX_BATCH_MS}`,
    );
  return n;
}

/** A comma-separated query value (`state=A,B`, `id=x,y`), at most `max` items. */
function listParam(v: string | undefined, max: number): string[] | undefined {
  if (v === undefined) return undefined;
  const items = v
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length > max) throw ceError('CE_ERR_JOB_TOO_MANY_IDS', `${items.length} items in one filter (most ${max})`);
  return items;
}

/**
 * The text of a state event, made once per event however many streams send it: the live
 * read hands each event object to every follower in turn before the next (event-feed.ts
 * #handAll), so the last one made is the one asked for again. One slot, not a WeakMap: a
 * weak entry per event was GC work for every event, whatever the count of streams.
 */
let lastEvent: JobEvent | undefined;
let lastText = '';

function sse(item: FeedItem): string {
  if (item.kind === 'relist')
    return `id: ${item.seq}\nevent: relist\ndata: ${JSON.stringify({
      reason: 'the resume point is not among the events kept: list the jobs again, then follow from this id',
      latest: item.seq,
    })}\n\n`;
  const e = item.event;
  if (e !== lastEvent) {
    lastText = `id: ${e.seq}\nevent: state\ndata: ${eventJson(e)}\n\n`;
    lastEvent = e;
  }
  return lastText;
}

/**
 * The JSON of one state change (what `since=` answers list too), written out directly: the
 * same text as JSON.stringify of {id, state, previous_state, time[, exit_code,
 * failure_reason]} without building that object and a Date per event (a third of the
 * encoding's cost). Every string from the store goes through JSON.stringify (a job id,
 * state or reason is never trusted to need no escaping); an exit code is an integer.
 */
export function eventJson(e: JobEvent): string {
  const prev = e.previousState === null ? 'null' : JSON.stringify(e.previousState);
  let s = `{"id":${JSON.stringify(e.jobId)},"state":${JSON.stringify(e.state)},"previous_state":${prev},"time":"${isoTime(e.at)}"`;
  if (e.exitCode !== undefined) s += `,"exit_code":${Number.isFinite(e.exitCode) ? e.exitCode : 'null'}`;
  if (e.failureReason !== undefined) s += `,"failure_reason":${JSON.stringify(e.failureReason)}`;
  return `${s}}`;
}

/** new Date(ms).toISOString(), with the last one kept: the events of one read share their second. */
let lastMs = NaN;
let lastIso = '';
function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

/** A DN in a comment line: no line breaks (they would start a field). */
function oneLine(s: string): string {
  return s.replace(/[\r\n]/g, ' ').slice(0, 256);
}
