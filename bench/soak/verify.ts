/**
 * The checks at the end of a soak or chaos run, from the client's side and the ledger:
 *  - every job acknowledged with 201 and not cleaned by the harness still exists
 *    (action=status does not answer 404 for it);
 *  - every one of them reaches a final state within the settle time;
 *  - no token is in the ledger twice (no job started twice), and every FINISHED job's
 *    token is there exactly once;
 *  - no job FAILED: the mix asks for no failure (its jobs finish, or are killed by the
 *    harness), so a failed job failed for a reason of the service's, under chaos most
 *    likely its own crash (a session directory a kill -9 left half made, a batch job
 *    lost). Each is reported with the reason the service gives (`diagnose/failed`).
 * Cleaned jobs were seen in a final state before the clean, so they count as ended (the
 * mix never cleans a FAILED job, so none escapes the last check).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ArcClient } from '../harness/client.js';
import { FINAL_STATES } from '../harness/answers.js';
import { chunks } from '../harness/job-bodies.js';
import { runsByToken, type Ledger } from './ledger.js';
import type { SoakJob } from './mix.js';

export interface Verdict {
  readonly acknowledged: number;
  readonly cleaned: number;
  /** Final states of the jobs checked (cleaned ones not included). */
  readonly states: Record<string, number>;
  /** Acknowledged, not cleaned, and answered 404. */
  readonly missing: string[];
  /** Answered 404 after a clean that got no answer (it was carried out before a kill): not a loss. */
  readonly cleanedUnanswered: number;
  /** Not final when the settle time ran out: id -> "last state (or no answer) kind". */
  readonly notEnded: Record<string, string>;
  /** Tokens in the ledger more than once: token -> runs (any job, acknowledged or not). */
  readonly ranTwice: Record<string, number>;
  /** FINISHED jobs whose token is not in the ledger: "id (kind)". */
  readonly finishedNotRun: string[];
  /** FAILED jobs: id -> "kind: the service's reason". */
  readonly failed: Record<string, string>;
  readonly settleS: number;
}

export function verdictOk(v: Verdict): boolean {
  return (
    v.missing.length === 0 &&
    Object.keys(v.notEnded).length === 0 &&
    Object.keys(v.ranTwice).length === 0 &&
    v.finishedNotRun.length === 0 &&
    Object.keys(v.failed).length === 0
  );
}

/** One line per failed check, for messages and notes. */
export function verdictProblems(v: Verdict): string[] {
  const out: string[] = [];
  const some = (ids: readonly string[]): string => `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''}`;
  if (v.missing.length > 0) out.push(`${v.missing.length} acknowledged jobs missing (404): ${some(v.missing)}`);
  const ne = Object.entries(v.notEnded);
  if (ne.length > 0) {
    const byState: Record<string, number> = {};
    for (const [, s] of ne) byState[s] = (byState[s] ?? 0) + 1;
    out.push(
      `${ne.length} jobs not ended after ${v.settleS} s (${Object.entries(byState)
        .map(([s, n]) => `${n} ${s}`)
        .join(', ')}): ${some(ne.map(([id]) => id))}`,
    );
  }
  const twice = Object.entries(v.ranTwice);
  if (twice.length > 0)
    out.push(`${twice.length} jobs ran more than once: ${some(twice.map(([t, n]) => `${t} ×${n}`))}`);
  if (v.finishedNotRun.length > 0)
    out.push(`${v.finishedNotRun.length} jobs FINISHED without running: ${some(v.finishedNotRun)}`);
  const failed = Object.entries(v.failed);
  if (failed.length > 0)
    out.push(`${failed.length} jobs FAILED, none asked to: ${some(failed.map(([id, why]) => `${id} (${why})`))}`);
  return out;
}

/**
 * Polls action=status (per owner, 500 ids a call) until every acknowledged job that
 * was not cleaned is final or missing, or `settleMs` passed; then reads the ledger.
 */
export async function verifyJobs(
  clients: readonly ArcClient[],
  jobs: ReadonlyMap<string, SoakJob>,
  ledger: Ledger,
  settleMs: number,
  onProgress?: (left: number) => void,
): Promise<Verdict> {
  const t0 = Date.now();
  const deadline = t0 + settleMs;
  const pending = new Map<string, SoakJob>();
  let cleaned = 0;
  for (const j of jobs.values()) {
    if (j.cleaned) cleaned++;
    else pending.set(j.id, j);
  }
  const last = new Map<string, string>();
  const states: Record<string, number> = {};
  const missing: string[] = [];
  let cleanedUnanswered = 0;
  while (pending.size > 0 && Date.now() < deadline) {
    for (const [u, client] of clients.entries()) {
      const ids = [...pending.values()].filter((j) => j.user === u).map((j) => j.id);
      for (const part of chunks(ids, 500)) {
        if (part.length === 0) continue;
        let items;
        try {
          items = (await client.action('status', part)).items;
        } catch {
          continue; // the service may be restarting; the next round asks again
        }
        for (const it of items) {
          if (it.id === undefined || !pending.has(it.id)) continue;
          if (it.status === 404) {
            if (pending.get(it.id)?.cleanUnanswered === true) cleanedUnanswered++;
            else missing.push(it.id);
            pending.delete(it.id);
          } else if (it.state !== undefined) {
            last.set(it.id, it.state);
            const j = pending.get(it.id) as SoakJob;
            j.state = it.state;
            if (FINAL_STATES.has(it.state)) {
              states[it.state] = (states[it.state] ?? 0) + 1;
              pending.delete(it.id);
            }
          }
        }
      }
    }
    onProgress?.(pending.size);
    if (pending.size > 0) await sleep(500);
  }
  const notEnded: Record<string, string> = {};
  for (const [id, j] of pending) notEnded[id] = `${last.get(id) ?? 'no answer'} ${j.kind}`;
  const runs = await runsByToken(ledger);
  const ranTwice: Record<string, number> = {};
  for (const [t, n] of runs) if (n > 1) ranTwice[t] = n;
  const finishedNotRun: string[] = [];
  for (const j of jobs.values())
    if (!j.cleaned && j.state === 'FINISHED' && (runs.get(j.token) ?? 0) === 0)
      finishedNotRun.push(`${j.id} (${j.kind})`);
  const failed: Record<string, string> = {};
  for (const j of jobs.values())
    if (!j.cleaned && j.state === 'FAILED') failed[j.id] = `${j.kind}: ${await failureReason(clients[j.user], j.id)}`;
  return {
    acknowledged: jobs.size,
    cleaned,
    states,
    missing,
    cleanedUnanswered,
    notEnded,
    ranTwice,
    finishedNotRun,
    failed,
    settleS: Math.round((Date.now() - t0) / 100) / 10,
  };
}

/** The reason the service gives for a failed job (its `failed` diagnose file), on one line. */
async function failureReason(client: ArcClient | undefined, id: string): Promise<string> {
  if (client === undefined) return 'no client of its owner';
  try {
    const a = await client.request('GET', `${client.restBase}/jobs/${id}/diagnose/failed`, { accept: '*/*' });
    const text = a.body.toString('utf8').trim().replace(/\s+/g, ' ');
    return a.status === 200 ? text.slice(0, 300) : `diagnose/failed answered ${a.status}`;
  } catch (e) {
    return `diagnose/failed got no answer (${e instanceof Error ? e.message : String(e)})`;
  }
}
