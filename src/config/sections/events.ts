import { Type } from '@sinclair/typebox';

/** The durable job event sequence (src/store/job-events.ts) and what of it is kept. */
export const eventsSection = {
  events: Type.Object(
    {
      retentionSeconds: Type.Integer({
        default: 7 * 24 * 3600,
        minimum: 1,
        description:
          'How long a job state change event is kept: a client resuming from an older event is told to list its jobs again',
      }),
      maxEvents: Type.Integer({
        default: 1_000_000,
        minimum: 1,
        description: 'At most this many job state change events are kept (the oldest go first), whatever their age',
      }),
      pruneIntervalSeconds: Type.Number({
        default: 60,
        exclusiveMinimum: 0,
        description: 'How often events past the retention are deleted',
      }),
      maxStreamsPerIdentity: Type.Integer({
        default: 64,
        minimum: 1,
        description:
          'Job event streams (GET jobs with Accept: text/event-stream) one identity may hold open at once; more are refused with 429. Streams are not requests in progress',
      }),
      heartbeatSeconds: Type.Number({
        default: 15,
        exclusiveMinimum: 0,
        description: 'A comment line is sent on each open event stream this often, so proxies keep a quiet stream open',
      }),
      streamBufferBytes: Type.Integer({
        default: 1024 * 1024,
        minimum: 1024,
        description:
          'An event stream whose reader lets more than this wait unread is ended with the reason slow-reader (the client resumes from its last event id)',
      }),
      pollMilliseconds: Type.Integer({
        default: 2,
        minimum: 1,
        maximum: 1000,
        description:
          'A job state change wakes the open event streams this long after it (the changes of this window are read together, with one read for all streams): the delay from a state change to its event. While every open stream gathers (batch=), the wake waits the shortest of their periods instead',
      }),
      fallbackPollMilliseconds: Type.Integer({
        default: 1000,
        minimum: 1,
        maximum: 60_000,
        description:
          'While any event stream is open, the newest event number is looked at this often, and new events are read when it moved, whether a change woke the streams or not (a safety net: every job change is made by the service and wakes them itself). While every open stream gathers (batch=), it looks once per the shortest of their periods instead, if that is longer',
      }),
    },
    { default: {}, additionalProperties: false },
  ),
};
