/**
 * The job event sequence at the composition root: its reader, and the timer that prunes
 * what retention (config `events`) no longer keeps.
 */
import type { Db } from '../store/database.js';
import { JobEvents } from '../store/job-events.js';
import { EventFeed } from '../jobs/event-feed.js';
import type { Config } from '../config/schema.js';
import type { Logger } from 'pino';

export interface EventsHandle {
  readonly events: JobEvents;
  /** The one feed of every job event stream (started when the first stream opens). */
  readonly feed: EventFeed;
  /** One prune now (tests and the timer). */
  prune(): number;
  close(): void;
}

export function createEvents(o: { config: Config; db: Db; log: Logger }): EventsHandle {
  const events = new JobEvents(o.db);
  const feed = new EventFeed(events, {
    pollMs: o.config.events.pollMilliseconds,
    fallbackPollMs: o.config.events.fallbackPollMilliseconds,
    maxBuffered: o.config.events.streamBufferBytes,
  });
  const prune = (): number => {
    const c = o.config.events; // read each time: a reload's new bounds apply at the next prune
    return events.prune({ maxAgeMs: c.retentionSeconds * 1000, maxEvents: c.maxEvents });
  };
  const tick = (): void => {
    try {
      const n = prune();
      if (n > 0) o.log.debug({ pruned: n }, 'job events past retention pruned');
    } catch (e) {
      o.log.error({ err: e }, 'job event prune failed');
    }
  };
  const timer = setInterval(tick, o.config.events.pruneIntervalSeconds * 1000);
  timer.unref();
  tick();
  return {
    events,
    feed,
    prune,
    close: () => {
      clearInterval(timer);
      feed.close();
    },
  };
}
