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
    },
    { default: {}, additionalProperties: false },
  ),
};
