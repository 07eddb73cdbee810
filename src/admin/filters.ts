/**
 * Parsing of the admin command's job filters; every bad value is refused with what was
 * expected (an admin's typo must not silently list nothing or everything).
 */
import { REST_STATES } from '../vocabulary/job-states.js';
import { AdminError } from './state-db.js';

export interface JobFilter {
  /** Substring of the owner DN (case-sensitive, as DNs are compared). */
  readonly owner?: string;
  readonly states?: readonly string[];
  readonly queue?: string;
  /** Created before now - olderThan (ms). */
  readonly olderThanMs?: number;
  /** Created after now - newerThan (ms). */
  readonly newerThanMs?: number;
  readonly limit: number;
}

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `90s`, `30m`, `12h`, `7d`, `2w` → milliseconds. */
export function parseAge(text: string, option: string): number {
  const m = /^(\d+)([smhdw])$/.exec(text.trim());
  if (!m) throw new AdminError(`${option}: '${text}' is not an age; use a number and a unit: 90s, 30m, 12h, 7d, 2w`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export function parseStates(text: string): string[] {
  const states = text
    .split(',')
    .map((s) => s.trim().toUpperCase())
    .filter((s) => s !== '');
  const bad = states.filter((s) => !(REST_STATES as readonly string[]).includes(s));
  if (states.length === 0 || bad.length)
    throw new AdminError(`--state: unknown state ${bad.join(', ') || "''"}; known: ${REST_STATES.join(', ')}`);
  return states;
}

export function parseLimit(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new AdminError(`--limit: '${text}' is not a positive whole number`);
  return n;
}

export function jobFilter(o: {
  owner?: string;
  state?: string;
  queue?: string;
  olderThan?: string;
  newerThan?: string;
  limit?: string;
}): JobFilter {
  return {
    ...(o.owner !== undefined ? { owner: o.owner } : {}),
    ...(o.state !== undefined ? { states: parseStates(o.state) } : {}),
    ...(o.queue !== undefined ? { queue: o.queue } : {}),
    ...(o.olderThan !== undefined ? { olderThanMs: parseAge(o.olderThan, '--older-than') } : {}),
    ...(o.newerThan !== undefined ? { newerThanMs: parseAge(o.newerThan, '--newer-than') } : {}),
    limit: o.limit !== undefined ? parseLimit(o.limit) : 1000,
  };
}
