// A database as an earlier release left it: the migrations up to `version` applied, and
// one job stored with only the columns every schema has. Migration tests open it with
// the current code.
import Database from 'better-sqlite3';
import { migrations } from '../../src/store/migrations.js';
import { ownerKeyOfStored } from '../../src/pki/rfc4514.js';

export function databaseAtSchema(
  file: string,
  version: number,
  job: { readonly id: string; readonly state: string; readonly restState: string },
): void {
  const old = new Database(file);
  // Migration 12 converts owners with the function the service registers (database.ts).
  old.function('ceres_owner_key', { deterministic: true }, (v: unknown) =>
    typeof v === 'string' ? ownerKeyOfStored(v) : v,
  );
  old.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)');
  for (const m of migrations.filter((x) => x.version <= version)) {
    old.exec(m.sql);
    old.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)').run(m.version, 1);
  }
  old
    .prepare(
      `INSERT INTO jobs (id, owner, state, pending, rest_state, queue, format, description, raw, created_at, updated_at, reruns_left) VALUES (?, '/CN=a', ?, 0, ?, '', 'xrsl', '{}', 'x', 1, 1, 0)`,
    )
    .run(job.id, job.state, job.restState);
  old.close();
}
