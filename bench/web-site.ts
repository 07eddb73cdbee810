/**
 * `npm run build && node dist/bench/web-site.js [--jobs 100000] [--runs 20]`
 *
 * The site pages' work at `--jobs` stored jobs (bench/harness/stored-jobs.ts: 50 owners, a
 * fifth still running, over eight queues) with the site series full to its bound (576
 * five-minute and 1,440 hourly buckets, each with the most names it keeps): what the routes
 * do for the overview with its pictures (a user's and a site administrator's, each window),
 * the pictures alone and the info page (the GLUE2 document built afresh, not from its
 * one-second cache, and rendered), each in one page's HTML; and one tick of the series. The
 * pictures are drawn afresh for each run (as the first request after a tick), and once more
 * from the drawing kept until the next tick (as every other request). Wall
 * time of each (median and 90th percentile of `--runs`, after a warm-up) and the page's size.
 * Prints one JSON document.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/store/database.js';
import { JobStore } from '../src/store/job-store.js';
import { JobPages } from '../src/store/job-pages.js';
import { SiteSeries } from '../src/store/site-series.js';
import { emptyBucket, MAX_KEYS, RESOLUTIONS, TIME_BINS } from '../src/store/site-buckets.js';
import { buildConfig } from '../src/config/load.js';
import { createInfoSource } from '../src/info/info-source.js';
import * as views from '../src/api/web/views.js';
import { sitePicturesFor, type SiteContext } from '../src/api/web/site-routes.js';
import type { Caller } from '../src/http/caller.js';
import { fillJobs } from './harness/stored-jobs.js';

const { values } = parseArgs({
  options: { jobs: { type: 'string', default: '100000' }, runs: { type: 'string', default: '20' } },
});
const jobs = Number(values.jobs);
const runs = Number(values.runs);
const queues = Array.from({ length: 8 }, (_, i) => `queue${i}`);

const dir = mkdtempSync(join(tmpdir(), 'ceres-bench-site-'));
try {
  const db = openDatabase(join(dir, 'ceres.db'));
  const fillCpuMs = fillJobs(db, jobs, { activeEvery: 5, queues, engineStates: true });
  // The series at its bound: every bucket of both lengths, each with MAX_KEYS names per dimension.
  const now = Date.now();
  const full = () => {
    const b = emptyBucket();
    b.samples = 1;
    for (const s of ['ACCEPTED', 'PREPARING', 'SUBMITTING', 'QUEUING', 'RUNNING', 'FINISHING']) b.states[s] = 100;
    b.ended = { FINISHED: 50, FAILED: 5, KILLED: 1 };
    for (const d of ['queue', 'vo', 'route'] as const)
      for (let k = 0; k < MAX_KEYS; k++) b.by[d][`${d}-name-${k}-${'x'.repeat(40)}`] = k * 10;
    b.stageIn = 40;
    b.stageOut = 40;
    b.wait = TIME_BINS.map((_, i) => i).concat(1);
    b.run = TIME_BINS.map((_, i) => i).concat(1);
    return JSON.stringify(b);
  };
  const put = db.prepare('INSERT INTO site_series (resolution, start, seq, data) VALUES (?, ?, 0, ?)');
  db.transaction(() => {
    for (const r of RESOLUTIONS) {
      const step = r.seconds * 1000;
      const last = Math.floor(now / step) * step - step;
      for (let i = 0; i < r.keep; i++) put.run(r.seconds, last - i * step, full());
    }
  })();
  const seriesKiB = Math.round(
    (db.prepare('SELECT sum(length(data)) FROM site_series').pluck().get() as number) / 1024,
  );

  const timed = (fn: () => string | void): { medianMs: number; p90Ms: number; kiB?: number } => {
    let out: string | void = undefined;
    const ms: number[] = [];
    for (let i = 0; i < runs + 2; i++) {
      const t = performance.now();
      out = fn();
      if (i >= 2) ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const r = (x: number) => Number(x.toFixed(1));
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] as number;
    return {
      medianMs: r(at(0.5)),
      p90Ms: r(at(0.9)),
      ...(typeof out === 'string' ? { kiB: Math.round(out.length / 1024) } : {}),
    };
  };

  const series = new SiteSeries(db);
  const tick = timed(() => series.tick());
  const store = new JobStore(db);
  const pages = new JobPages(db);
  const config = buildConfig({ stateDir: dir, cluster: { queues: queues.map((name) => ({ name })) } });
  const infoSource = () =>
    createInfoSource({
      config,
      store,
      endpointUrl: () => 'https://ce.example.org/arex',
      hostname: 'ce.example.org',
      sessionSpace: () => ({ totalBytes: 100, freeBytes: 50 }),
      lrms: { name: 'fork' },
      trustedCas: [],
      startTime: new Date(0),
    });
  const v = { ...views, assets: views.loadAssets() };
  const user = { dn: '/O=Grid/CN=user7', owner: '/O=Grid/CN=user7' } as Caller;
  const admin = { dn: '/O=Grid/CN=admin', owner: '/O=Grid/CN=admin' } as Caller;
  const ctx = { mount: '/arex', isAdmin: (c: Caller) => c === admin } as unknown as SiteContext;
  const shell = (c: Caller) => ({ mount: '/arex', assets: v.assets, who: c.dn, admin: c === admin });
  /** What the overview route does: the caller's counts, the queues' lines, the pictures, the page. */
  const overview =
    (c: Caller, window: string, cold = true) =>
    () => {
      const states = pages.countsOf(c.owner);
      const per = new Map(queues.map((q) => [q, { queue: q, running: 0, waiting: 0, free: undefined }]));
      for (const r of store.countActiveByState()) {
        const q = per.get(r.queue);
        if (q && r.state === 'INLRMS') q.running += r.n;
      }
      const pics = sitePicturesFor(
        cold ? { series: { points: (a, b, c) => series.points(a, b, c) } } : { series },
        ctx,
        v,
        c,
        { window },
      );
      const body = v.overviewBody({ version: 'x', healthy: true, queues: [...per.values()], states, mount: '/arex' });
      return v.page(shell(c), 'Overview', v.html`${body}${pics}`).text;
    };
  const result = {
    jobs,
    activeJobs: Math.floor(jobs / 5),
    fillCpuMs,
    seriesRows: 576 + 1440,
    seriesKiB,
    tick,
    overview: {
      user6h: timed(overview(user, '6h')),
      user48h: timed(overview(user, '48h')),
      user60d: timed(overview(user, '60d')),
      admin6h: timed(overview(admin, '6h')),
      admin48h: timed(overview(admin, '48h')),
      admin60d: timed(overview(admin, '60d')),
    },
    /** The same with the pictures drawn since the last tick (what the next minute's requests get). */
    overviewCached: {
      admin60d: timed(overview(admin, '60d', false)),
      user6h: timed(overview(user, '6h', false)),
    },
    picturesAlone60dAdmin: timed(() => sitePicturesFor({ series }, ctx, v, admin, { window: '60d' })!.text),
    infoPage: timed(
      () =>
        v.page(
          shell(user),
          'Site information',
          v.infoBody(infoSource().document(), { mount: '/arex', raw: '/arex/rest/1.1/info' }),
        ).text,
    ),
    countByStateAllMs: timed(() => void store.countByState()),
    countActiveByStateMs: timed(() => void store.countActiveByState()),
  };
  db.close();
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
