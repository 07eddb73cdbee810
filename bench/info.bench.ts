/**
 * The cost of `action=info` and of job id lists, in-process: the rendering of 1,000
 * ComputingActivity documents as a bulk answer (JSON and XML), the whole info path from
 * the store (row read, view, document, answer text), and the parsing of id lists (XML
 * as the ARC client sends it, JSON as pyarcrest does). Each figure is measured for the
 * way it was done before (the element builder kept in test/info/legacy-activity.ts and
 * the generic renderers; the saxes parse of every XML list) and the way it is done now,
 * alternating in the same process, so machine noise hits both alike.
 *
 * Run after building: node <build>/bench/info.bench.js [--rounds N] [--ms M] [--jobs N] [--only TEXT] [--now-only]
 * Prints, per figure, the median over N rounds of CPU time per call (process user +
 * system time, which other load on the machine disturbs less than wall time).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { el, type XmlElement } from '../src/doc/element.js';
import { renderDoc } from '../src/http/send.js';
import { bulkPieces, JOBS_FORCED_ARRAYS } from '../src/api/rest/jobs/render.js';
import { parseIdList } from '../src/api/rest/jobs/id-list.js';
import { JobActions } from '../src/jobs/job-actions.js';
import { activityWriter, type ActivityOptions } from '../src/jobs/activity.js';
import { emptyJobDescription } from '../src/vocabulary/job-description.js';
import { openDatabase } from '../src/store/database.js';
import { JobStore, type NewJob } from '../src/store/job-store.js';
import type { JobChanges } from '../src/store/job-record.js';
import { legacyActivityDocument } from '../test/info/legacy-activity.js';
import { legacyParseIdList } from '../test/api/legacy-id-list.js';
import { median, numberArg } from './micro-args.js';

const rounds = numberArg('--rounds', 9);
const roundMs = numberArg('--ms', 300);
const nJobs = numberArg('--jobs', 1000);
/** `--only TEXT`: the figures whose name contains TEXT; `--now-only`: no "before" (for a profile of the new code). */
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const nowOnly = process.argv.includes('--now-only');

const OWNER = '/DC=org/DC=example/CN=Bench User';
const root = mkdtempSync(join(tmpdir(), 'ceres-info-bench-'));
const store = new JobStore(openDatabase(join(root, 'db')));

/** Jobs as a user's 1,000 look after a day: most ended, some failed or killed, some running. */
function fill(): string[] {
  const now = Date.now();
  const jobs: NewJob[] = [];
  for (let i = 0; i < nJobs; i++) {
    jobs.push({
      id: `${(now + i).toString(36)}${'kDmABFKDmIrLKDmZBFKDmf1DrGn'.slice(0, 20)}${i}`,
      owner: OWNER,
      state: 'ACCEPTED',
      restState: 'ACCEPTING',
      queue: 'main',
      delegationId: i % 2 ? 'd1' : null,
      delegationIds: i % 2 ? ['d1'] : [],
      format: i % 3 ? 'xrsl' : 'adl',
      description: {
        ...emptyJobDescription(i % 3 ? 'xrsl' : 'adl'),
        jobName: `bench-${i}`,
        executable: '/bin/sh',
        arguments: ['-c', 'echo hello'],
        stdout: 'out.txt',
        stderr: 'err.txt',
        logDir: 'gmlog',
        wallTimeSeconds: 3600,
        runtimeEnvironments: i % 5 ? [] : [{ name: 'ENV/PROXY', options: [] }],
      },
      raw: '&(executable=/bin/sh)(arguments="-c" "echo hello")(stdout=out.txt)(stderr=err.txt)(gmlog=gmlog)',
      createdAt: now - 86_400_000 + i * 50,
      rerunsLeft: 0,
      clientHost: '192.0.2.7',
      localAccount: null,
      fqans: null,
    });
  }
  store.insertMany(jobs);
  jobs.forEach((j, i) => {
    const ended = i % 10 !== 0;
    const changes: JobChanges = ended
      ? {
          state: 'FINISHED',
          restState: i % 7 === 0 ? 'FAILED' : i % 11 === 0 ? 'KILLED' : 'FINISHED',
          outcome: i % 7 === 0 ? 'failed' : i % 11 === 0 ? 'killed' : 'success',
          exitCode: i % 7 === 0 ? 1 : 0,
          localId: String(10_000 + i),
          startedAt: now - 80_000_000 + i * 50,
          endedAt: now - 70_000_000 + i * 50,
          eraseAt: now + 600_000_000 + i * 50,
          ...(i % 7 === 0 ? { failedState: 'INLRMS', failureReason: 'Job finished with non-zero exit code 1' } : {}),
          engine: {
            usage: {
              wallTimeSeconds: 12.4,
              cpuTimeSeconds: 3.1,
              maxRssBytes: 52_428_800,
              nodes: ['wn01.example.org'],
              endTime: now - 70_000_000 + i * 50,
            },
          },
        }
      : { state: 'INLRMS', restState: 'RUNNING', lrmsState: 'RUNNING', localId: String(10_000 + i), startedAt: now };
    const r = store.get(j.id);
    if (!r || !store.update(r, changes)) throw new Error(`bench setup: cannot update ${j.id}`);
  });
  return jobs.map((j) => j.id);
}

const ids = fill();
const expiry = new Date(Date.now() + 43_200_000);
// As the service wires it (src/service/start.ts), the expiry is a query of the delegation store.
const expiryOf = openDatabase(join(root, 'db')).prepare('SELECT ? AS e');
const options: ActivityOptions = {
  hostname: 'ce.example.org',
  proxyExpiry: (d) => (expiryOf.get(d) ? expiry : undefined),
};
const legacyOptions = { ...options, delegationsOf: (id: string) => store.delegationsOf(id) };
const engine = { jobsSubmitted: () => undefined, jobPoked: () => undefined };
const actions = new JobActions(store, engine, () => activityWriter(options));
/** Without the document cache: every call reads and writes every document (a first call). */
const uncached = new JobActions(store, engine, () => activityWriter(options), 0);

function* mapLazy<T, U>(xs: readonly T[], f: (x: T) => U): Generator<U> {
  for (const x of xs) yield f(x);
}
function join2(pieces: Iterable<string>): number {
  let n = 0;
  for (const p of pieces) n += p.length;
  return n;
}

// The 1,000 records, read once, for the rendering-only figures.
const records = ids.map((id) => store.getOwned(id, OWNER)!);

/** Before: the tree per job, the bulk answer's tree, the generic renderer. */
function legacyAnswer(format: 'json' | 'xml', recs: typeof records): number {
  const now = new Date();
  const items: XmlElement[] = recs.map((j) =>
    el('job', [
      el('status-code', '200'),
      el('reason', 'OK'),
      el('id', j.id),
      el('info_document', [legacyActivityDocument(j, legacyOptions, now)]),
    ]),
  );
  return renderDoc(el('jobs', items), format, JOBS_FORCED_ARRAYS).length;
}
function newAnswer(format: 'json' | 'xml', recs: typeof records): number {
  const write = activityWriter(options);
  return join2(
    bulkPieces(
      recs.map((j) => ({ status: 200, reason: 'OK', id: j.id, infoDocument: write.write(j) })),
      format,
    ),
  );
}

/** The whole path as the REST handler runs it: one id at a time, read, view, document, text. */
function legacyInfo(format: 'json' | 'xml'): number {
  return legacyAnswer(
    format,
    ids.map((id) => store.getOwned(id, OWNER)!),
  );
}
function newInfo(format: 'json' | 'xml', a = actions): number {
  const info = a.infoOf(OWNER, ids, format);
  return join2(bulkPieces(mapLazy(ids, info), format));
}

function idLists(n: number): { xml: Buffer; json: Buffer } {
  const some = Array.from({ length: n }, (_, i) => ids[i % ids.length]!);
  return {
    xml: Buffer.from(`<jobs>${some.map((id) => `<job><id>${id}</id></job>`).join('')}</jobs>`),
    json: Buffer.from(JSON.stringify({ job: some.map((id) => ({ id })) })),
  };
}

let sink = 0;
/** CPU milliseconds per call of `f`, over one round of about `roundMs` wall time. */
function cpuPerCall(f: () => number): number {
  const deadline = performance.now() + roundMs;
  const c0 = process.cpuUsage();
  let n = 0;
  do {
    sink += f();
    n++;
  } while (performance.now() < deadline);
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000 / n;
}

type Case = [figure: string, before: () => number, now: () => number];
const cases: Case[] = [];
for (const format of ['json', 'xml'] as const) {
  cases.push([
    `render ${nJobs} activities, ${format}`,
    () => legacyAnswer(format, records),
    () => newAnswer(format, records),
  ]);
}
for (const format of ['json', 'xml'] as const) {
  cases.push([
    `action=info, ${nJobs} ids, ${format}, no cache`,
    () => legacyInfo(format),
    () => newInfo(format, uncached),
  ]);
  cases.push([`action=info, ${nJobs} ids, ${format}, unchanged jobs`, () => legacyInfo(format), () => newInfo(format)]);
}
for (const n of [100, 1000, 10_000]) {
  const { xml, json } = idLists(n);
  cases.push([
    `parse ${n} ids, XML without Content-Type`,
    () => legacyParseIdList(xml, undefined, 100_000).length,
    () => parseIdList(xml, undefined, 100_000).length,
  ]);
  cases.push([
    `parse ${n} ids, JSON`,
    () => legacyParseIdList(json, 'application/json', 100_000).length,
    () => parseIdList(json, 'application/json', 100_000).length,
  ]);
}

const pad = (s: string, n: number): string => s.padEnd(n);
const ms = (x: number): string => (x >= 1 ? x.toFixed(2) : x.toFixed(4)) + ' ms';
console.log(`${rounds} rounds of ${roundMs} ms per figure and variant, alternating; CPU time per call, median`);
console.log(`| ${pad('figure', 48)} | before | now | before ÷ now |`);
console.log(`| ${'-'.repeat(48)} | --- | --- | --- |`);
for (const [figure, before, now] of cases) {
  if (only !== undefined && !figure.includes(only)) continue;
  if (nowOnly) {
    const a: number[] = [];
    for (let r = 0; r < rounds; r++) a.push(cpuPerCall(now));
    console.log(`| ${pad(figure, 48)} | | ${ms(median(a))} | |`);
    continue;
  }
  before();
  now();
  const b: number[] = [];
  const a: number[] = [];
  for (let r = 0; r < rounds; r++) {
    b.push(cpuPerCall(before));
    a.push(cpuPerCall(now));
  }
  const mb = median(b);
  const ma = median(a);
  console.log(`| ${pad(figure, 48)} | ${ms(mb)} | ${ms(ma)} | ${(mb / ma).toFixed(2)}× |`);
}
rmSync(root, { recursive: true, force: true });
if (sink === 0) console.log('');
