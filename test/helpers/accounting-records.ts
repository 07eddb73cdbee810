/**
 * Accounting records written straight into a state database (as the recorder writes
 * them), for the tests and the benchmark of accounting sent to APEL: `n` finished runs
 * ending `stepMs` apart from `fromMs`, owners and VOs taking turns.
 */
import type { Db } from '../../src/store/database.js';
import { toRow, type AccountingRecord } from '../../src/accounting/record.js';

export const RECORD_BASE: AccountingRecord = {
  jobId: 'job',
  localId: '1',
  endpoint: 'https://ce.example.org:443/arex',
  queue: 'main',
  owner: '/DC=org/DC=example/CN=Jane Doe',
  vo: 'atlas',
  fqans: ['/atlas/uk/Role=production/Capability=NULL'],
  localAccount: 'atlas001',
  finalState: 'FINISHED',
  exitCode: 0,
  submittedAt: Date.UTC(2026, 9, 1),
  startedAt: Date.UTC(2026, 9, 1),
  endedAt: Date.UTC(2026, 9, 1),
  wallSeconds: 600,
  userCpuSeconds: 500,
  systemCpuSeconds: 20,
  cores: 1,
  nodes: ['n1'],
  maxRssBytes: 1 << 20,
  stageInBytes: 0,
  stageOutBytes: 0,
  runtimeEnvironments: [],
  recordedAt: Date.UTC(2026, 9, 1),
  jobReported: [],
};

export function insertRecords(
  db: Db,
  n: number,
  o: { fromMs: number; stepMs: number; prefix?: string; users?: number },
): string[] {
  const cols = Object.keys(toRow(RECORD_BASE));
  const insert = db.prepare(
    `INSERT OR IGNORE INTO accounting_records (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`,
  );
  const ids: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const id = `${o.prefix ?? 'job'}-${String(i).padStart(7, '0')}`;
      const u = i % (o.users ?? 3);
      const endedAt = o.fromMs + i * o.stepMs;
      const vo = u === 2 ? null : u === 1 ? 'cms' : 'atlas';
      insert.run(
        toRow({
          ...RECORD_BASE,
          jobId: id,
          localId: String(1000 + i),
          owner: `${RECORD_BASE.owner} ${u}`,
          vo,
          fqans: vo === null ? [] : [`/${vo}/Role=NULL/Capability=NULL`],
          startedAt: endedAt - 600_000,
          submittedAt: endedAt - 700_000,
          endedAt,
          recordedAt: endedAt,
        }),
      );
      ids.push(id);
    }
  })();
  return ids;
}
