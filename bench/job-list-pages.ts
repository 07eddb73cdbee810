/**
 * `npm run build && node dist/bench/job-list-pages.js [--jobs 1000000] [--page 1000] [--runs 15]`
 *
 * `GET jobs` pages (the list extension, src/store/job-list.ts) at `--jobs` stored jobs: one
 * owner holds half of them (a pilot factory's DN), 99 others the rest; a third carry a VOMS
 * FQAN of VO atlas; states spread. For each kind of page (the owner's list, one state of it,
 * an exact name, a monitor's VO list) the process CPU time of one page of `--page` jobs
 * (store query plus the JSON answer's pieces), at the first page and at the pages starting
 * 25 %, 50 % and 99 % down the list, median of `--runs`. Keyset paging should make them all
 * alike. Prints one JSON document.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/store/database.js';
import { JobList, type JobListQuery } from '../src/store/job-list.js';
import { listPieces } from '../src/api/rest/jobs/render.js';
import { newJobId } from '../src/jobs/job-id.js';
import { REST_STATES } from '../src/vocabulary/job-states.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '1000000' },
    page: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '15' },
  },
});
const jobs = Number(values.jobs);
const page = Number(values.page);
const runs = Number(values.runs);
const BIG = '/O=Grid/CN=pilot-factory';

const dir = mkdtempSync(join(tmpdir(), 'ceres-bench-joblist-'));
try {
  const db = openDatabase(join(dir, 'ceres.db'));
  const ins = db.prepare(
    `INSERT INTO jobs (id, owner, owner_dn, name, state, rest_state, queue, format, description, raw, created_at, fqans, updated_at)
     VALUES (?, ?, ?, ?, 'FINISHED', ?, 'main', 'xrsl', '{}', 'x', ?, ?, ?)`,
  );
  const t0 = 1_700_000_000_000;
  const c0 = process.cpuUsage();
  const w0 = Date.now();
  const slice = 50_000;
  for (let from = 0; from < jobs; from += slice)
    db.transaction(() => {
      for (let i = from; i < Math.min(jobs, from + slice); i++) {
        const owner = i % 2 === 0 ? BIG : `/O=Grid/CN=user${i % 99}`;
        ins.run(
          newJobId(),
          owner,
          owner,
          `task-${i % 1000}`,
          REST_STATES[i % REST_STATES.length],
          t0 + i,
          i % 3 === 0 ? JSON.stringify(['/atlas/Role=production']) : null,
          t0 + i,
        );
      }
    })();
  const fill = process.cpuUsage(c0);
  const fillWallMs = Date.now() - w0;
  const list = new JobList(db);
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  /** CPU of one page (query and the JSON answer), at each depth: the median of `runs`. */
  const pageCpu = (q: Omit<JobListQuery, 'after' | 'limit'>) => {
    const ids = list.find(q).map((j) => j.id);
    const out: Record<string, number> = { matching: ids.length };
    for (const [name, at] of [
      ['first', undefined],
      ['at25', ids[Math.floor(ids.length * 0.25)]],
      ['at50', ids[Math.floor(ids.length * 0.5)]],
      ['at99', ids[Math.floor(ids.length * 0.99)]],
    ] as const) {
      const xs: number[] = [];
      for (let r = 0; r < runs; r++) {
        const s = process.cpuUsage();
        let bytes = 0;
        for (const p of listPieces(list.find({ ...q, after: at, limit: page }), 'json')) bytes += p.length;
        const c = process.cpuUsage(s);
        if (bytes === 0) throw new Error('empty answer');
        xs.push((c.user + c.system) / 1000);
      }
      out[`${name}Ms`] = Number(median(xs).toFixed(2));
    }
    return out;
  };
  const bigKey = BIG;
  const result = {
    jobs,
    page,
    runs,
    fillCpuMs: Math.round((fill.user + fill.system) / 1000),
    fillWallMs,
    ownerList: pageCpu({ owner: bigKey }),
    ownerOneState: pageCpu({ owner: bigKey, states: ['FINISHED'] }),
    ownerName: pageCpu({ owner: bigKey, name: 'task-42' }),
    monitorVo: pageCpu({ vo: 'atlas' }),
    ownerVo: pageCpu({ owner: bigKey, vo: 'atlas' }),
  };
  db.close();
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
