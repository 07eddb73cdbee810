import { Type } from '@sinclair/typebox';

/** Data staging and cache. Keys live under `staging`; every key needs a default and a line in docs/configuration.md. */
export const stagingSection = {
  staging: Type.Object({}, { default: {}, additionalProperties: false }),
};
