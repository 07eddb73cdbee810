/**
 * The answer to `action=status`, written straight from the id list to the bytes sent,
 * JSON or XML.
 *
 * aCT and arcstat ask for thousands of states at a time, and the answer is the whole
 * cost of the call: the lookups are Map probes (src/store/job-index.ts). Going through
 * one BulkItem object per id and `JSON.stringify` of the item array (render.ts) took
 * about as long as everything else in the handler (docs/performance.md, "status").
 * Here each item is concatenated from pieces that are the same for every item of a state,
 * and only the id is escaped, and only when it has a character that needs it. The answer
 * is returned as the bytes sent: copied as Latin-1 when every character is ASCII (job ids
 * and state names are), which is a plain copy, where the UTF-8 encoder looks at each
 * character. The bytes are those of
 * Buffer.from(renderBulk(answerEach(entries, actions.status, ...), format)): a property
 * test holds the two to each other.
 */
import { escapeText } from '../../../doc/render-xml.js';
import type { IdEntry } from './id-list.js';

/** The REST state of a job of the caller, or undefined (unknown, or another owner's). */
export type StateOf = (id: string) => string | undefined;

export function statusAnswer(entries: readonly IdEntry[], stateOf: StateOf, format: 'json' | 'xml'): Buffer {
  return format === 'json' ? statusJson(entries, stateOf) : statusXml(entries, stateOf);
}

/**
 * Ids that JSON.stringify leaves as they are (printable ASCII but quote and backslash),
 * and that escapeText leaves as they are (printable ASCII but `&<>`): job ids always.
 */
const JSON_PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
const XML_PLAIN = /^[\x20-\x25\x27-\x3b\x3d\x3f-\x7e]*$/;
/** A character outside ASCII (a UTF-16 code unit above 0x7f, surrogates included). */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * The answer's text as its UTF-8 bytes. Text known to be ASCII is copied as Latin-1 (the
 * same bytes for ASCII; a plain copy, where the UTF-8 encoder looks at every character):
 * about a third of a 1,000-id answer's cost before.
 */
function bytesOf(s: string, ascii: boolean): Buffer {
  return Buffer.from(s, ascii ? 'latin1' : 'utf8');
}

const JSON_FOUND = '{"status-code":"200","reason":"OK","id":';
const JSON_MISSING = '{"status-code":"404","reason":"Job not found","id":';
const JSON_INVALID = '{"status-code":"400","reason":';

/** `,"state":"<state>"}` per state value (a handful of distinct strings), and whether it is ASCII. */
const jsonTails = new Map<string, { text: string; ascii: boolean }>();
function jsonTail(state: string): { text: string; ascii: boolean } {
  let t = jsonTails.get(state);
  if (t === undefined) {
    const text = `,"state":${JSON.stringify(state)}}`;
    t = { text, ascii: !NON_ASCII.test(text) };
    if (jsonTails.size < 64) jsonTails.set(state, t);
  }
  return t;
}

function statusJson(entries: readonly IdEntry[], stateOf: StateOf): Buffer {
  let s = '{"job":[';
  let ascii = true;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as IdEntry;
    if (i > 0) s += ',';
    if (typeof e !== 'string') {
      s += JSON_INVALID + JSON.stringify(e.reason) + '}';
      ascii = false;
      continue;
    }
    let id: string;
    if (JSON_PLAIN.test(e)) id = '"' + e + '"';
    else {
      id = JSON.stringify(e);
      ascii = false;
    }
    const state = stateOf(e);
    if (state !== undefined) {
      const t = jsonTail(state);
      if (!t.ascii) ascii = false;
      s += JSON_FOUND + id + t.text;
    } else s += JSON_MISSING + id + '}';
  }
  return bytesOf(s + ']}', ascii);
}

const XML_FOUND = '<job><status-code>200</status-code><reason>OK</reason><id>';
const XML_MISSING = '<job><status-code>404</status-code><reason>Job not found</reason><id>';
const XML_INVALID = '<job><status-code>400</status-code><reason>';

function statusXml(entries: readonly IdEntry[], stateOf: StateOf): Buffer {
  if (entries.length === 0) return bytesOf('<jobs/>', true);
  let s = '<jobs>';
  let ascii = true;
  for (const e of entries) {
    if (typeof e !== 'string') {
      s += XML_INVALID + escapeText(e.reason) + '</reason></job>';
      ascii = false;
      continue;
    }
    let id = e;
    if (!XML_PLAIN.test(e)) {
      id = escapeText(e);
      ascii = false;
    }
    const state = stateOf(e);
    if (state !== undefined) {
      if (NON_ASCII.test(state)) ascii = false;
      s += XML_FOUND + id + '</id><state>' + escapeText(state) + '</state></job>';
    } else s += XML_MISSING + id + '</id></job>';
  }
  return bytesOf(s + '</jobs>', ascii);
}
