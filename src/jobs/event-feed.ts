/**
 * Delivers the durable job event sequence (src/store/job-events.ts) to followers, each
 * seeing only its owner's events, in order, each once: the core of the job event stream
 * (not yet wired to HTTP).
 *
 * A follower first replays what it missed (its owner's events after its resume point,
 * page by page, yielding in between), then gets live events. Live events are read once
 * for all followers by one read of the table, so the cost of a change is one read plus one
 * hand-over per follower of its owner, not a read per follower. The read is woken by the
 * job store's writes (src/store/event-signal.ts), at most `pollMs` after a change, the
 * changes of that window read together; nothing runs while nothing changes, but for a
 * slow safety-net poll for a change the signal did not carry (every `fallbackPollMs`, or
 * once per shortest gathering period while every open follower gathers).
 * No gap, no duplicate: a follower takes only events after the last it got (`last`), and
 * its replay ends in the same turn as its last page read, with everything after that page
 * still ahead of the poll's cursor or of `last`.
 *
 * A slow reader never holds the service: when what a follower has not yet written out
 * passes `maxBuffered`, it is ended with the reason `slow-reader` and resumes later from
 * its last id. A replay goes at the reader's pace instead (the store is its buffer): it
 * hands events over while less than half the bound waits, and waits while more does; a
 * reader that takes nothing for `replayStallMs` is ended as slow. A resume point older than retention gets one `relist` item (the client lists
 * its jobs again) and continues from the newest event.
 */
import type { JobEvent, JobEvents } from '../store/job-events.js';

export type FeedItem =
  | { readonly kind: 'state'; readonly event: JobEvent }
  | { readonly kind: 'relist'; readonly seq: number; readonly prunedThrough: number };

export interface Follower {
  readonly owner: string;
  /**
   * A VO the follower monitors (src/authz/monitors.ts, checked by the caller): it follows
   * the events of that VO's jobs, whoever owns them, instead of its owner's.
   */
  readonly monitor?: string;
  /**
   * Only these jobs' events (the stream's `id=` filter). The feed keeps such followers by
   * job id, so an event costs nothing for the followers of other ids: an identity with a
   * thousand streams, each on its own jobs, is not a thousand checks per event.
   */
  readonly ids?: ReadonlySet<string>;
  /** Only events into these REST states (the stream's `state=` filter). */
  readonly states?: ReadonlySet<string>;
  /**
   * How long after a change this follower may take its event (the stream's `batch=`): a
   * wake reads the table this long after the first change it was woken for, unless a
   * follower that wants its events sooner is open. A follower with a delay must write
   * an event out by its time (`at`) plus the delay, not by the time it was handed over.
   */
  readonly delayMs?: number;
  /** Hands one item over (the stream writes it out). */
  send(item: FeedItem): void;
  /** What has been handed over and not yet written out (bytes, the stream's measure). */
  buffered(): number;
  /** The feed ends the follower (slow reader); it is unsubscribed already. */
  end(reason: 'slow-reader'): void;
}

/** Where a resume point stands: usable, past retention, or never given out. */
export type ResumeCheck = 'ok' | 'relist' | 'future';

export interface EventFeedOptions {
  /** After a job write's signal, the table is read this much later (writes meanwhile join the read). */
  readonly pollMs?: number;
  /** While a follower is open, the table is read this often whatever the signals say. */
  readonly fallbackPollMs?: number;
  /** A follower with more than this handed over and not written out is ended. */
  readonly maxBuffered?: number;
  /** Events read per page (replay and poll). */
  readonly page?: number;
  /** A replaying reader that takes nothing for this long is ended as slow. */
  readonly replayStallMs?: number;
}

/** How often a paused replay looks whether its reader took something. */
const REPLAY_WAIT_MS = 5;

/** The followers of one owner (or VO): those of every job, and those of named jobs by id. */
interface Group {
  readonly all: Set<Entry>;
  readonly byId: Map<string, Set<Entry>>;
}

interface Entry {
  readonly f: Follower;
  last: number;
  replaying: boolean;
  open: boolean;
}

export class EventFeed {
  readonly #events: JobEvents;
  readonly #pollMs: number;
  readonly #fallbackPollMs: number;
  readonly #maxBuffered: number;
  readonly #page: number;
  readonly #replayStallMs: number;
  /** Followers by what they follow: `o:<owner>` or `v:<VO>` (keyOf). */
  readonly #byOwner = new Map<string, Group>();
  #count = 0;
  #cursor = 0;
  /** The safety net's next tick, and the period it was set for. */
  #timer: NodeJS.Timeout | undefined;
  #netMs = 0;
  /** The read a signal scheduled, until it runs, and when it is due (performance.now()). */
  #woken: NodeJS.Timeout | undefined;
  #wokenDue = 0;
  /** The open followers' delays (delayMs, 0 without), with how many have each. */
  readonly #delays = new Map<number, number>();
  /** The smallest of #delays: how long after a change the wake reads. */
  #delay = 0;
  #unsignal: (() => void) | undefined;

  constructor(events: JobEvents, o: EventFeedOptions = {}) {
    this.#events = events;
    this.#pollMs = o.pollMs ?? 2;
    this.#fallbackPollMs = o.fallbackPollMs ?? 1000;
    this.#maxBuffered = o.maxBuffered ?? 1 << 20;
    this.#page = o.page ?? 1000;
    this.#replayStallMs = o.replayStallMs ?? 10_000;
  }

  /** Open followers (a metric; it returns to 0 when every follower is gone). */
  get open(): number {
    return this.#count;
  }

  /** The newest sequence number (what a re-listing client continues from). */
  latest(): number {
    return this.#events.latest();
  }

  /** Whether a client may resume after `seq` (a safe integer, checked by the caller). */
  check(seq: number): ResumeCheck {
    if (seq > this.#events.latest()) return 'future';
    return seq < this.#events.prunedThrough() ? 'relist' : 'ok';
  }

  /**
   * The jobs of `owner` that changed after `after`, each once, at most `max` of them, and
   * the sequence number to ask from next time (the `since=` of action=status and info).
   * The newest number is read before the events, so a change stored meanwhile is either
   * among them or after `next`: the next call never misses it. 'relist': the events after
   * `after` are no longer all kept (or never were given out); the client lists again.
   */
  changedSince(
    owner: string,
    after: number,
    max: number,
    monitor?: string,
  ): { ids: string[]; next: number } | 'relist' {
    const latest = this.#events.latest();
    if (this.check(after) !== 'ok') return 'relist';
    const ids = new Set<string>();
    let next = after;
    for (;;) {
      const page = this.#after({ owner, monitor }, next);
      for (const ev of page) {
        if (!ids.has(ev.jobId) && ids.size === max) return { ids: [...ids], next };
        ids.add(ev.jobId);
        next = ev.seq;
      }
      if (page.length < this.#page) return { ids: [...ids], next: Math.max(next, latest) };
    }
  }

  /**
   * Follows `f.owner`'s events after `after` (undefined: from now on). A resume point that
   * `check` calls 'future' must be refused by the caller. Returns the unsubscribe.
   */
  follow(f: Follower, after?: number): () => void {
    let start = after ?? this.#events.latest();
    const e: Entry = { f, last: start, replaying: after !== undefined, open: true };
    if (after !== undefined && this.check(after) === 'relist') {
      start = this.#events.latest();
      e.last = start;
      e.replaying = false;
      f.send({ kind: 'relist', seq: start, prunedThrough: this.#events.prunedThrough() });
    }
    let g = this.#byOwner.get(keyOf(f));
    if (g === undefined) this.#byOwner.set(keyOf(f), (g = { all: new Set(), byId: new Map() }));
    if (f.ids === undefined) g.all.add(e);
    else
      for (const id of f.ids) {
        let set = g.byId.get(id);
        if (set === undefined) g.byId.set(id, (set = new Set()));
        set.add(e);
      }
    this.#count++;
    this.#countDelay(f.delayMs ?? 0, 1);
    if (this.#unsignal === undefined) {
      this.#cursor = this.#events.latest();
      this.#armSafetyNet();
      this.#unsignal = this.#events.onAdded(() => this.#wake());
    }
    if (e.replaying) this.#replay(e);
    return () => this.#drop(e);
  }

  /**
   * Reads now what a wake would read later (a gathering follower's changes wait up to its
   * delay): before the streams end at a stop, so that what was changed goes out with the end.
   */
  flush(): void {
    if (this.#woken === undefined) return;
    clearTimeout(this.#woken);
    this.#woken = undefined;
    this.#poll();
  }

  /** Ends polling and forgets every follower (service stop). */
  close(): void {
    for (const g of this.#byOwner.values()) {
      for (const e of g.all) e.open = false;
      for (const set of g.byId.values()) for (const e of set) e.open = false;
    }
    this.#byOwner.clear();
    this.#count = 0;
    this.#stopTimer();
  }

  #drop(e: Entry): void {
    if (!e.open) return;
    e.open = false;
    const g = this.#byOwner.get(keyOf(e.f));
    if (g !== undefined) {
      if (e.f.ids === undefined) g.all.delete(e);
      else
        for (const id of e.f.ids) {
          const set = g.byId.get(id);
          set?.delete(e);
          if (set?.size === 0) g.byId.delete(id);
        }
      if (g.all.size === 0 && g.byId.size === 0) this.#byOwner.delete(keyOf(e.f));
    }
    this.#count--;
    this.#countDelay(e.f.delayMs ?? 0, -1);
    if (this.#count === 0) this.#stopTimer();
  }

  /**
   * Keeps #delay the smallest open follower's delay. A follower wanting its events sooner
   * than a wake already set for later brings that wake forward.
   */
  #countDelay(d: number, by: 1 | -1): void {
    const n = (this.#delays.get(d) ?? 0) + by;
    if (n > 0) this.#delays.set(d, n);
    else this.#delays.delete(d);
    this.#delay = this.#delays.size === 0 ? 0 : Math.min(...this.#delays.keys());
    if (this.#timer !== undefined && this.#netMs !== this.#safetyNetMs()) this.#armSafetyNet();
    if (this.#woken !== undefined && this.#wokenDue > performance.now() + this.#wakeMs()) {
      clearTimeout(this.#woken);
      this.#woken = undefined;
      this.#wake();
    }
  }

  /** How long after a signal the wake reads: `pollMs`, or the smallest follower delay if longer. */
  #wakeMs(): number {
    return Math.max(this.#pollMs, this.#delay);
  }

  /**
   * The safety net's period: `fallbackPollMs`, or, while every open follower gathers, the
   * shortest gathering. Such a follower takes its events a period late anyway, so a tick
   * between would only wake the service for nothing: a stream with batch=10000 costs 6
   * ticks a minute, not 60 (docs/performance.md, "Following 100,000 jobs").
   */
  #safetyNetMs(): number {
    return Math.max(this.#fallbackPollMs, this.#delay);
  }

  /** (Re)starts the safety net's timer at the current period. */
  #armSafetyNet(): void {
    clearTimeout(this.#timer);
    this.#netMs = this.#safetyNetMs();
    this.#timer = setTimeout(() => {
      this.#safetyNet();
      // Not when that tick ended the last follower (a slow reader): the net is stopped.
      if (this.#unsignal !== undefined) this.#armSafetyNet();
    }, this.#netMs);
    this.#timer.unref();
  }

  #stopTimer(): void {
    clearTimeout(this.#timer);
    clearTimeout(this.#woken);
    this.#unsignal?.();
    this.#timer = this.#woken = this.#unsignal = undefined;
  }

  /**
   * A job write may have added events: one read soon, for every write until then. Soon is
   * `pollMs`, or, while every open follower gathers (batch=), the shortest gathering: a
   * read then carries all of a period's events at once, not one read per change.
   */
  #wake(): void {
    if (this.#woken !== undefined) return;
    const ms = this.#wakeMs();
    this.#wokenDue = performance.now() + ms;
    this.#woken = setTimeout(() => {
      this.#woken = undefined;
      this.#poll();
    }, ms);
    this.#woken.unref();
  }

  /**
   * The slow poll for changes no signal carried (another connection's writes): one look
   * at the newest number given out, a read only when it moved past what was read. A quiet
   * service pays a timer and one row's lookup per period for all its streams together.
   */
  #safetyNet(): void {
    if (this.#woken !== undefined) return;
    const latest = this.#events.latest();
    if (latest <= this.#cursor) return;
    this.#poll();
    // Numbers up to `latest` that this read (made after it was looked up) did not find are
    // gone (pruned while no stream read them): without this every tick would read again.
    if (this.#cursor < latest) this.#cursor = latest;
  }

  /**
   * One page of a follower's missed events per turn, so a long backlog never blocks others;
   * at most half the buffer bound ahead of the reader (then it waits for the reader).
   */
  #replay(e: Entry, stalledSince?: number): void {
    if (!e.open) return;
    const room = this.#maxBuffered / 2;
    if (e.f.buffered() > room) {
      const since = stalledSince ?? Date.now();
      if (Date.now() - since > this.#replayStallMs) {
        this.#drop(e);
        e.f.end('slow-reader');
        return;
      }
      setTimeout(() => this.#replay(e, since), REPLAY_WAIT_MS).unref();
      return;
    }
    const page = this.#after(e.f, e.last);
    let i = 0;
    for (; i < page.length && e.f.buffered() <= room; i++) if (!this.#hand(e, page[i]!)) return;
    if (i === page.length && page.length < this.#page) {
      e.replaying = false;
      return;
    }
    setImmediate(() => this.#replay(e));
  }

  #poll(): void {
    for (;;) {
      const page = this.#events.allAfter(this.#cursor, this.#page);
      for (const ev of page) {
        this.#cursor = ev.seq;
        this.#handAll(this.#byOwner.get(`o:${ev.owner}`), ev);
        if (ev.vo !== null) this.#handAll(this.#byOwner.get(`v:${ev.vo}`), ev);
      }
      if (page.length < this.#page) return;
    }
  }

  /**
   * The followers of `g` that take `ev`: those without an id filter and those naming its
   * job. A Set visited while #hand ends a follower (which deletes it) stays valid.
   */
  #handAll(g: Group | undefined, ev: JobEvent): void {
    if (g === undefined) return;
    for (const e of g.all) if (!e.replaying) this.#hand(e, ev);
    const named = g.byId.get(ev.jobId);
    if (named !== undefined) for (const e of named) if (!e.replaying) this.#hand(e, ev);
  }

  /** The events a follower (or a `since=` caller) sees after `seq`: its owner's or its VO's. */
  #after(f: Pick<Follower, 'owner' | 'monitor'>, seq: number): JobEvent[] {
    return f.monitor !== undefined
      ? this.#events.afterInVo(f.monitor, seq, this.#page)
      : this.#events.after(f.owner, seq, this.#page);
  }

  /** Hands `ev` over unless the follower has it; false when the follower was ended. */
  #hand(e: Entry, ev: JobEvent): boolean {
    if (!e.open) return false;
    if (ev.seq <= e.last) return true;
    if (!wants(e.f, ev)) {
      // Passed over, but passed: a replay pages on from here.
      e.last = ev.seq;
      return true;
    }
    if (e.f.delayMs !== undefined && !e.replaying && e.f.buffered() > this.#maxBuffered / 2) {
      // A gathering follower's read carries a whole period's changes at once, which may be
      // more than its bound: it goes on at its reader's pace from the store, as a replay
      // does (a reader that takes nothing for replayStallMs is ended then), not ended here.
      e.replaying = true;
      setImmediate(() => this.#replay(e));
      return true;
    }
    if (e.f.buffered() > this.#maxBuffered) {
      this.#drop(e);
      e.f.end('slow-reader');
      return false;
    }
    e.last = ev.seq;
    e.f.send({ kind: 'state', event: ev });
    return true;
  }
}

/** Whether `ev` passes the follower's filters (a replay reads all its owner's events). */
function wants(f: Follower, ev: JobEvent): boolean {
  return (f.ids === undefined || f.ids.has(ev.jobId)) && (f.states === undefined || f.states.has(ev.state));
}

/** What a follower follows, as the key of its set: its owner's jobs or a VO's. */
function keyOf(f: Pick<Follower, 'owner' | 'monitor'>): string {
  return f.monitor !== undefined ? `v:${f.monitor}` : `o:${f.owner}`;
}
