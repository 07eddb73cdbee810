import { Type } from '@sinclair/typebox';

/** Job store, submission limits, bulk-call caps. Keys live under `jobs`; every key needs a default and a line in docs/configuration.md. */
export const jobsSection = {
  jobs: Type.Object({}, { default: {}, additionalProperties: false }),
};
