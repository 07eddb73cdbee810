/**
 * A submission body (`POST jobs?action=new`) → one item per job description, each
 * parsed into the job model or failed on its own. Forms: a single ADL document, an
 * `<ActivityDescriptions>` bulk document, a single xRSL (`&...`), a `+` multi-xRSL.
 *
 * Whole-request problems throw a CeError (4xx): no body, a blank body, content that is
 * neither XML nor xRSL, invalid UTF-8, a `+` multi-xRSL with broken syntax, too many
 * items. Everything else is a per-item failure: one bad description never affects the
 * others. Acceptance (queue, delegation, ...) is a separate step: checkAcceptance.
 */
import { parseAdlBody, rootLocalName } from './adl/parse-adl-body.js';
import { detectFormat, type DescriptionFormat } from './detect-format.js';
import { itemFailure } from './item-failure.js';
import { defaultParseLimits, type ParseLimits } from './limits.js';
import type { SubmissionItem } from './submission-item.js';
import { parseXrslBody } from './xrsl/parse-xrsl.js';

export interface SplitSubmission {
  format: DescriptionFormat;
  /**
   * The body used a multi-description form (`<ActivityDescriptions>` or `+`), even with
   * one item: A-REX then refuses `instances` > 1 (403).
   */
  multi: boolean;
  items: SubmissionItem[];
}

export function splitSubmission(body: Buffer | Uint8Array | string, opts: Partial<ParseLimits> = {}): SplitSubmission {
  const limits: ParseLimits = { ...defaultParseLimits, ...opts };
  const { format, text, start } = detectFormat(body);
  if (format === 'adl') {
    const r = parseAdlBody(start === 0 ? text : text.slice(start), limits);
    return { format, multi: r.multi, items: r.items };
  }
  const multi = text.charCodeAt(start) === 0x2b;
  if (!multi && Buffer.byteLength(text, 'utf8') > limits.maxDescriptionBytes) {
    return { format, multi, items: [itemFailure('CE_ERR_JOBDESC_TOO_BIG')] };
  }
  const r = parseXrslBody(text, start, limits);
  return { format, multi: r.multi, items: r.items };
}

/**
 * Whether the body is a multi-description form (a `+` xRSL or `<ActivityDescriptions>`),
 * found without parsing it (the web's form uploads input files for one job only). Throws
 * as splitSubmission does for a body that is no description at all.
 */
export function isMultiDescription(body: Buffer | Uint8Array | string): boolean {
  const { format, text, start } = detectFormat(body);
  return format === 'adl'
    ? rootLocalName(text.slice(start)) === 'ActivityDescriptions'
    : text.charCodeAt(start) === 0x2b;
}
