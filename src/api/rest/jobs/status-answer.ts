/**
 * The answer to `action=status`, written straight from the id list to JSON or XML text.
 *
 * aCT and arcstat ask for thousands of states at a time, and the answer is the whole
 * cost of the call: the lookups are Map probes (src/store/job-index.ts). Going through
 * one BulkItem object per id and `JSON.stringify` of the item array (render.ts) took
 * about as long as everything else in the handler (docs/performance.md, "status");
 * here each item is concatenated from pieces that are the same for every item of a
 * state, and only the id is escaped. The bytes are those of
 * renderBulk(answerEach(entries, actions.status, ...), format): a property test holds
 * the two to each other.
 */
import { escapeText } from '../../../doc/render-xml.js';
import type { IdEntry } from './id-list.js';

/** The REST state of a job of the caller, or undefined (unknown, or another owner's). */
export type StateOf = (id: string) => string | undefined;

export function statusAnswer(entries: readonly IdEntry[], stateOf: StateOf, format: 'json' | 'xml'): string {
  return format === 'json' ? statusJson(entries, stateOf) : statusXml(entries, stateOf);
}

const JSON_FOUND = '{"status-code":"200","reason":"OK","id":';
const JSON_MISSING = '{"status-code":"404","reason":"Job not found","id":';
const JSON_INVALID = '{"status-code":"400","reason":';

/** `,"state":"<state>"}` per state value: a handful of distinct strings. */
const jsonTails = new Map<string, string>();
function jsonTail(state: string): string {
  let t = jsonTails.get(state);
  if (t === undefined) {
    t = `,"state":${JSON.stringify(state)}}`;
    if (jsonTails.size < 64) jsonTails.set(state, t);
  }
  return t;
}

function statusJson(entries: readonly IdEntry[], stateOf: StateOf): string {
  let s = '{"job":[';
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as IdEntry;
    if (i > 0) s += ',';
    if (typeof e !== 'string') {
      s += JSON_INVALID + JSON.stringify(e.reason) + '}';
      continue;
    }
    const state = stateOf(e);
    s +=
      state !== undefined ? JSON_FOUND + JSON.stringify(e) + jsonTail(state) : JSON_MISSING + JSON.stringify(e) + '}';
  }
  return s + ']}';
}

const XML_FOUND = '<job><status-code>200</status-code><reason>OK</reason><id>';
const XML_MISSING = '<job><status-code>404</status-code><reason>Job not found</reason><id>';
const XML_INVALID = '<job><status-code>400</status-code><reason>';

function statusXml(entries: readonly IdEntry[], stateOf: StateOf): string {
  if (entries.length === 0) return '<jobs/>';
  let s = '<jobs>';
  for (const e of entries) {
    if (typeof e !== 'string') {
      s += XML_INVALID + escapeText(e.reason) + '</reason></job>';
      continue;
    }
    const state = stateOf(e);
    s +=
      state !== undefined
        ? XML_FOUND + escapeText(e) + '</id><state>' + escapeText(state) + '</state></job>'
        : XML_MISSING + escapeText(e) + '</id></job>';
  }
  return s + '</jobs>';
}
