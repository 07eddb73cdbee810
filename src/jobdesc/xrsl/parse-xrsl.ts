/**
 * xRSL body → job descriptions: one for `&...`, one per operand for `+(...)(...)`.
 *
 * Failure texts follow A-REX's assembly: `nordugrid:xrsl parsing error:` then
 * `line:column: message` on the next line when the parser claims the text, otherwise
 * `No job description parser was able to interpret job description` (we add the
 * position and message on a second line; A-REX gives none). Positions are relative to
 * the whole body, also for `+` operands.
 *
 * A `+` body whose syntax is broken cannot be split into items reliably, so it fails the
 * whole request (as in A-REX, but 400 instead of 500). Once it parses, each operand is
 * evaluated and checked on its own: one bad operand fails only its own item (A-REX
 * fails the whole request for those too).
 */
import { ceError } from '../../errors/ce-error.js';
import { itemFailure, type ItemFailure } from '../item-failure.js';
import { defaultParseLimits, type ParseLimits } from '../limits.js';
import type { JobDescription } from '../../vocabulary/job-description.js';
import type { SubmissionItem } from '../submission-item.js';
import { interpretXrsl } from './attributes.js';
import { evaluateRequest, type ExpansionBudget } from './evaluate.js';
import { LineIndex } from './line-index.js';
import { parseRsl } from './parser.js';
import { RslError, type RslNode } from './syntax.js';

export interface XrslBody {
  /** A `+` multi-request. */
  multi: boolean;
  items: SubmissionItem[];
}

/** Variable expansion may produce this many characters plus a multiple of the input. */
const EXPANSION_BASE = 1024 * 1024;
const EXPANSION_FACTOR = 4;

export function rslFailure(e: RslError, lines: LineIndex): ItemFailure {
  const { line, column } = lines.position(e.offset);
  const detail = `${line}:${column}: ${e.message}`;
  return e.claimed
    ? itemFailure('CE_ERR_JOBDESC_XRSL_INVALID', `nordugrid:xrsl parsing error:\n${detail}`, line)
    : itemFailure(
        'CE_ERR_JOBDESC_NOT_RECOGNISED',
        `No job description parser was able to interpret job description\nnordugrid:xrsl: ${detail}`,
        line,
      );
}

function describe(node: RslNode, budget: ExpansionBudget): JobDescription {
  const { relations, alternatives } = evaluateRequest(node, budget);
  const description = interpretXrsl(relations);
  // Alternatives (`|` branches after the first) are only checked: their errors count.
  for (const alt of alternatives) interpretXrsl(alt);
  return description;
}

/** Parses an xRSL body (decoded text; `start` = offset of its `&` or `+`). */
export function parseXrslBody(text: string, start: number, limits: ParseLimits = defaultParseLimits): XrslBody {
  const lines = new LineIndex(text);
  const isMulti = text.charCodeAt(start) === 0x2b;
  let root: RslNode;
  try {
    root = parseRsl(text, { maxDepth: limits.maxNestingDepth });
  } catch (e) {
    if (!(e instanceof RslError)) throw e;
    const f = rslFailure(e, lines);
    if (isMulti) throw ceError('CE_ERR_JOBDESC_MULTI_XRSL_SYNTAX', f.reason.replaceAll('\n', ' '));
    return { multi: false, items: [f] };
  }
  const budget: ExpansionBudget = { remaining: EXPANSION_BASE + EXPANSION_FACTOR * text.length };
  if (root.kind !== 'boolean' || root.op !== '+') return { multi: false, items: [one(text, root, budget, lines)] };
  if (root.operands.length > limits.maxItems)
    throw ceError('CE_ERR_JOBDESC_TOO_MANY_ITEMS', `More than ${limits.maxItems} job descriptions in one request`);
  const items: SubmissionItem[] = [];
  for (const op of root.operands) {
    // A bare relation operand, `+(executable=x)`, becomes the description `&(executable=x)`.
    const sub = op.kind === 'relation' ? `&(${text.slice(op.start, op.end)})` : text.slice(op.start, op.end);
    if (Buffer.byteLength(sub, 'utf8') > limits.maxDescriptionBytes) items.push(itemFailure('CE_ERR_JOBDESC_TOO_BIG'));
    else items.push(one(sub, op, budget, lines));
  }
  return { multi: true, items };
}

function one(text: string, node: RslNode, budget: ExpansionBudget, lines: LineIndex): SubmissionItem {
  try {
    return { ok: true, text, description: describe(node, budget) };
  } catch (e) {
    if (e instanceof RslError) return rslFailure(e, lines);
    throw e;
  }
}

/** One xRSL description (tests, tools): the description or the item failure. */
export function parseXrsl(
  text: string,
  limits: ParseLimits = defaultParseLimits,
): { ok: true; description: JobDescription } | ItemFailure {
  let i = 0;
  while (i < text.length && text.charCodeAt(i) <= 0x20) i++;
  const [item] = parseXrslBody(text, i, limits).items;
  if (!item) throw new Error('parseXrslBody returned no item');
  return item.ok ? { ok: true, description: item.description } : item;
}
