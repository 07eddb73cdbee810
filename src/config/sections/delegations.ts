import { Type } from '@sinclair/typebox';

/** Credential delegations. Keys live under `delegations`; every key needs a default and a line in docs/configuration.md. */
export const delegationsSection = {
  delegations: Type.Object({}, { default: {}, additionalProperties: false }),
};
