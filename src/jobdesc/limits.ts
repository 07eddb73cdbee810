/**
 * Bounds that keep parsing linear and memory-bounded whatever a client sends.
 * A-REX's own limit is `maxjobdesc` (5 MiB per description); the others have no A-REX
 * counterpart and are set far above anything a real description needs.
 */
import { MiB } from '../config/units.js';

export interface ParseLimits {
  /** Largest single description in bytes (A-REX `maxjobdesc`). */
  maxDescriptionBytes: number;
  /** Most descriptions in one submission (`<ActivityDescriptions>` children, `+` operands). */
  maxItems: number;
  /** Deepest nesting of xRSL groups/sequences and of XML elements. */
  maxNestingDepth: number;
  /** Most attributes on one XML element. */
  maxXmlAttributes: number;
}

export const defaultParseLimits: ParseLimits = {
  maxDescriptionBytes: 5 * MiB,
  maxItems: 10_000,
  maxNestingDepth: 64,
  maxXmlAttributes: 64,
};
