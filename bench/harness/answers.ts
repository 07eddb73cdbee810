/**
 * Reading the JSON answers of the jobs endpoints (spec §2 "Shapes of bodies").
 *
 * A-REX renders JSON mechanically from XML, so one job comes as an object and several
 * as an array (`{"job":{...}}` / `{"job":[...]}`), per-item `status-code` is a string,
 * and an empty collection is an empty body. Both shapes are accepted everywhere.
 */
import { BenchError } from './failures.js';

export interface BulkItem {
  readonly status: number;
  readonly reason: string;
  readonly id?: string;
  readonly state?: string;
}

export interface ListedJob {
  readonly id: string;
  readonly state?: string;
}

function jobsOf(text: string, what: string): Record<string, unknown>[] {
  if (text.trim() === '') return [];
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new BenchError('not-arc', `${what}: the answer is not JSON ("${text.slice(0, 60).replace(/\s+/g, ' ')}")`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new BenchError('not-arc', `${what}: the answer is not a JSON object`);
  const job = (doc as Record<string, unknown>).job;
  if (job === undefined) return [];
  const list = Array.isArray(job) ? job : [job];
  return list.filter((x): x is Record<string, unknown> => typeof x === 'object' && x !== null);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** Per-item results of a POST jobs?action=... answer, in answer order. */
export function parseBulk(text: string, what = 'bulk answer'): BulkItem[] {
  return jobsOf(text, what).map((j) => {
    const id = str(j.id);
    const state = str(j.state);
    return {
      status: Number(str(j['status-code']) ?? Number.NaN),
      reason: str(j.reason) ?? '',
      ...(id !== undefined && id !== '' ? { id } : {}),
      ...(state !== undefined && state !== '' ? { state } : {}),
    };
  });
}

/** Entries of a GET jobs answer. */
export function parseJobList(text: string): ListedJob[] {
  const out: ListedJob[] = [];
  for (const j of jobsOf(text, 'job list')) {
    const id = str(j.id);
    if (id === undefined || id === '') continue;
    const state = str(j.state);
    out.push(state !== undefined ? { id, state } : { id });
  }
  return out;
}

/** Ids of the items that were created (status-code 201), and a tally of the others. */
export function createdIds(items: readonly BulkItem[]): { ids: string[]; failures: Map<string, number> } {
  const ids: string[] = [];
  const failures = new Map<string, number>();
  for (const it of items) {
    if (it.status === 201 && it.id !== undefined) ids.push(it.id);
    else {
      const k = `${Number.isNaN(it.status) ? '?' : it.status} ${it.reason}`.trim();
      failures.set(k, (failures.get(k) ?? 0) + 1);
    }
  }
  return { ids, failures };
}

/** "3 x 500 No job description parser..., 1 x 404 ..." for messages. */
export function tallyText(t: ReadonlyMap<string, number>, max = 3): string {
  const parts = [...t.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${n} x ${k.slice(0, 80)}`);
  return parts.length > max ? `${parts.slice(0, max).join('; ')}; ...` : parts.join('; ');
}

export const FINAL_STATES: ReadonlySet<string> = new Set(['FINISHED', 'FAILED', 'KILLED', 'WIPED']);
