/**
 * `npm run build && node dist/bench/web-list.js [--jobs 100000] [--runs 10]`
 *
 * The web interface's job list at `--jobs` stored jobs (50 owners, names repeating, ends
 * spread, a third with VOMS FQANs): the time of one page of 50 (store query plus the rows'
 * HTML) for each order (first and a deep page), a search, and the administrator's filters
 * (the worst case: a filter matching few rows, which walks the whole order index). Process
 * CPU time, median of `--runs`. Prints one JSON document.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../src/store/database.js';
import { JobPages, sortValue, type JobQuery } from '../src/store/job-pages.js';
import { jobRows } from '../src/api/web/job-list.js';
import { fillJobs } from './harness/stored-jobs.js';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '100000' }, runs: { type: 'string', default: '10' } },
});
const jobs = Number(values.jobs);
const runs = Number(values.runs);
const dir = mkdtempSync(join(tmpdir(), 'ceres-bench-weblist-'));
try {
  const db = openDatabase(join(dir, 'ceres.db'));
  const fillCpuMs = fillJobs(db, jobs);
  const pages = new JobPages(db);
  const cpuMs = (fn: () => void): number => {
    const s = process.cpuUsage();
    fn();
    const c = process.cpuUsage(s);
    return (c.user + c.system) / 1000;
  };
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  /** One page as the list answers it: 51 rows asked, 50 rendered. */
  const time = (q: Omit<JobQuery, 'limit'>, deep = false): number => {
    let after = q.after;
    if (deep) {
      // Start half way down the order: the row at the middle of a full walk's positions.
      const all = pages.find({ ...q, limit: jobs });
      const mid = all[Math.floor(all.length / 2)];
      if (mid !== undefined) after = { value: sortValue(q.sort ?? 'submitted', mid), id: mid.id };
    }
    const xs: number[] = [];
    for (let r = 0; r < runs; r++)
      xs.push(
        cpuMs(() => void jobRows('', pages.find({ ...q, after, limit: 51 }).slice(0, 50), q.owner === undefined)),
      );
    return Number(median(xs).toFixed(2));
  };
  const me = '/O=Grid/CN=user7';
  const result = {
    jobs,
    fillCpuMs,
    userPageMs: {
      submitted: time({ owner: me }),
      submittedDeep: time({ owner: me }, true),
      ended: time({ owner: me, sort: 'ended' }),
      endedDeep: time({ owner: me, sort: 'ended' }, true),
      name: time({ owner: me, sort: 'name' }),
      nameDeep: time({ owner: me, sort: 'name' }, true),
      failed: time({ owner: me, state: 'FAILED' }),
      searchCommon: time({ owner: me, search: 'step1' }),
      searchRare: time({ owner: me, search: 'analysis-996-step' }),
      searchNone: time({ owner: me, search: 'no-such-name' }),
    },
    adminPageMs: {
      submitted: time({}),
      submittedDeep: time({}, true),
      name: time({ sort: 'name' }),
      ended: time({ sort: 'ended' }),
      byOwner: time({ ownerDn: me }),
      byAccount: time({ account: 'pool123' }),
      byVo: time({ vo: 'atlas' }),
      byVoNone: time({ vo: 'cms' }),
      searchNone: time({ search: 'no-such-name' }),
    },
  };
  db.close();
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
