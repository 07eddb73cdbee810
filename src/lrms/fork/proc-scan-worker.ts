/**
 * The scanning thread (./proc-scanner.ts starts it): runs one pass over /proc per
 * message and answers with the number of processes killed, or the error.
 */
import { parentPort } from 'node:worker_threads';
import { scanProcOnce, type ScanJob } from './proc-scan.js';

export interface ScanRequest {
  readonly id: number;
  readonly jobs: readonly ScanJob[];
  readonly spare: readonly number[];
}

export type ScanAnswer =
  { readonly id: number; readonly killed: number } | { readonly id: number; readonly error: string };

parentPort?.on('message', (m: ScanRequest) => {
  let answer: ScanAnswer;
  try {
    answer = { id: m.id, killed: scanProcOnce(m.jobs, new Set(m.spare)) };
  } catch (e) {
    answer = { id: m.id, error: e instanceof Error ? e.message : String(e) };
  }
  parentPort?.postMessage(answer);
});
