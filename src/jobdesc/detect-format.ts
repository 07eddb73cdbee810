/**
 * Which language a submission body is in, decided by content: clients send xRSL as
 * `applicaton/rsl` (sic), `application/json` or with no Content-Type at all, so the
 * header carries no information (A-REX ignores it too).
 *
 * Rule (A-REX's, widened): after a UTF-8 BOM, whitespace and `(* ... *)` comments, `<`
 * is XML (ADL), `&` or `+` is xRSL. A-REX rejects the BOM and the leading comment; both
 * are harmless, so we accept them. A leading `|` or bare `(` stays unrecognised, as in
 * A-REX. Failures here concern the request as a whole and throw a CeError.
 */
import { ceError } from '../errors/ce-error.js';

export type DescriptionFormat = 'adl' | 'xrsl';

export interface DetectedBody {
  format: DescriptionFormat;
  /** The body decoded as UTF-8, without a leading BOM. */
  text: string;
  /** Offset in `text` of the first significant character (`<`, `&` or `+`). */
  start: number;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function decodeBody(body: Buffer | Uint8Array | string): string {
  if (typeof body === 'string') return body;
  try {
    return strictUtf8.decode(body);
  } catch {
    throw ceError('CE_ERR_JOBDESC_INVALID_UTF8');
  }
}

/** RSL whitespace: space, TAB, LF, VT, FF, CR. */
export function isRslSpace(c: number): boolean {
  return c === 0x20 || (c >= 0x09 && c <= 0x0d);
}

export function detectFormat(body: Buffer | Uint8Array | string): DetectedBody {
  if (body.length === 0) throw ceError('CE_ERR_JOBDESC_MISSING_PAYLOAD');
  let text = decodeBody(body);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let i = 0;
  const n = text.length;
  let sawComment = false;
  for (;;) {
    while (i < n && isRslSpace(text.charCodeAt(i))) i++;
    if (i + 1 < n && text.charCodeAt(i) === 0x28 /* ( */ && text.charCodeAt(i + 1) === 0x2a /* * */) {
      const end = text.indexOf('*)', i + 2);
      if (end < 0) throw ceError('CE_ERR_JOBDESC_UNRECOGNIZED', 'Payload is not recognized: unterminated (* comment');
      i = end + 2;
      sawComment = true;
      continue;
    }
    break;
  }
  if (i >= n) throw ceError('CE_ERR_JOBDESC_EMPTY_PAYLOAD');
  const c = text.charCodeAt(i);
  // Comments are xRSL syntax: after one, only xRSL may follow.
  if (c === 0x3c /* < */ && !sawComment) return { format: 'adl', text, start: i };
  if (c === 0x26 /* & */ || c === 0x2b /* + */) return { format: 'xrsl', text, start: i };
  throw ceError('CE_ERR_JOBDESC_UNRECOGNIZED');
}
