// Migration 20 on a real database written by the previous schema: a job's VO is computed
// from its stored FQANs (the first one's VO), its events kept from before get it, and the
// remade triggers give every later event its job's VO.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { databaseAtSchema } from '../helpers/old-database.js';
import { JobStore } from '../../src/store/job-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr20-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe("migration 20: a job's VO, indexed, and on its events", () => {
  it('old jobs get the VO of their first FQAN; old and new events carry it', () => {
    const file = join(dir, 'ceres.db');
    databaseAtSchema(file, 19, { id: 'oldjob', state: 'INLRMS', restState: 'RUNNING' });
    const old = new Database(file);
    old.prepare('UPDATE jobs SET fqans = ? WHERE id = ?').run('["/atlas/prod/Role=pilot","/cms"]', 'oldjob');
    for (const [id, fqans] of [
      ['novo', null],
      ['bare', '["/dteam"]'],
      ['slash', '["/"]'],
      ['nota', '["atlas"]'],
    ] as const)
      old
        .prepare(
          `INSERT INTO jobs (id, owner, state, pending, rest_state, queue, format, description, raw, created_at, updated_at, reruns_left, fqans) VALUES (?, '/CN=a', 'ACCEPTED', 0, 'ACCEPTING', '', 'xrsl', '{}', 'x', 1, 1, 0, ?)`,
        )
        .run(id, fqans);
    old.close();

    const db = openDatabase(file);
    const vo = (id: string) => db.prepare('SELECT vo FROM jobs WHERE id = ?').pluck().get(id);
    assert.equal(vo('oldjob'), 'atlas');
    assert.equal(vo('bare'), 'dteam');
    assert.equal(vo('novo'), null);
    assert.equal(vo('slash'), null, 'an FQAN without a VO name');
    assert.equal(vo('nota'), null, 'not an FQAN');
    const eventVo = (id: string) =>
      db.prepare('SELECT vo FROM job_events WHERE job_id = ? ORDER BY seq DESC LIMIT 1').pluck().get(id);
    assert.equal(eventVo('bare'), 'dteam', 'an event kept from before gets its job’s VO');
    const store = new JobStore(db);
    const j = store.get('oldjob')!;
    assert.ok(store.update(j, { state: 'FINISHING', restState: 'FINISHING' }));
    assert.equal(eventVo('oldjob'), 'atlas', 'a new event carries the VO');
    const plan = db
      .prepare("EXPLAIN QUERY PLAN SELECT id FROM jobs WHERE vo = 'atlas' AND id > '' ORDER BY id LIMIT 10")
      .all() as { detail: string }[];
    assert.match(plan.map((p) => p.detail).join(';'), /USING (COVERING )?INDEX jobs_vo/);
    db.close();
  });
});
