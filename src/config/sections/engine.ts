import { Type } from '@sinclair/typebox';

/** Job engine: processing limits, batch backend (lrms). Keys live under `engine`; every key needs a default and a line in docs/configuration.md. */
export const engineSection = {
  engine: Type.Object({}, { default: {}, additionalProperties: false }),
};
