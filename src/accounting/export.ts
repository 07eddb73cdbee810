/**
 * `ceres accounting export`: the records of runs that ended in [from, to) written as files
 * for the site's publisher: APEL summary and sync messages, and one OGF usage record per
 * run. Read-only on the database; running it again writes the same files.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db } from '../store/database.js';
import { fromRow, type AccountingRecord, type AccountingRow } from './record.js';
import { summaries, sync, type ApelOptions } from './apel.js';
import { usageRecordXml } from './usage-record.js';

export function recordsBetween(db: Db, fromMs: number, toMs: number): AccountingRecord[] {
  return (
    db
      .prepare('SELECT * FROM accounting_records WHERE ended_at >= ? AND ended_at < ? ORDER BY ended_at, job_id')
      .all(fromMs, toMs) as AccountingRow[]
  ).map(fromRow);
}

export interface ExportResult {
  readonly records: number;
  readonly files: readonly string[];
}

export function exportAccounting(
  db: Db,
  o: ApelOptions & { fromMs: number; toMs: number; outDir: string; machineName: string; label: string },
): ExportResult {
  const records = recordsBetween(db, o.fromMs, o.toMs);
  const apelDir = join(o.outDir, 'apel');
  const urDir = join(o.outDir, 'usage-records');
  // The records name every user (DN, local account) and what they ran: the site's
  // publisher reads them as the service's user, nobody else (jobs included) may.
  mkdirSync(apelDir, { recursive: true, mode: 0o700 });
  mkdirSync(urDir, { recursive: true, mode: 0o700 });
  const files: string[] = [];
  const write = (f: string, text: string): void => {
    writeFileSync(f, text, { mode: 0o600 });
    // An older export's file keeps its mode on rewrite: narrowed too.
    chmodSync(f, 0o600);
    files.push(f);
  };
  if (records.length) {
    write(join(apelDir, `summaries-${o.label}.txt`), summaries(records, o));
    write(join(apelDir, `sync-${o.label}.txt`), sync(records, o));
  }
  for (const r of records)
    write(join(urDir, `${r.jobId}-${r.endedAt}.xml`), usageRecordXml(r, { site: o.site, machineName: o.machineName }));
  return { records: records.length, files };
}
