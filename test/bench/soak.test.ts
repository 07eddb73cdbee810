// The pure parts of the soak harness: the tally by route, the ledger's run counts,
// the checks' messages, the RSS growth figure, the jobs a status asks about, and the
// opt-in scenario name.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, appendFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tally } from '../../bench/soak/tally.js';
import { makeLedger, runsByToken, soakJob } from '../../bench/soak/ledger.js';
import { verdictOk, verdictProblems, type Verdict } from '../../bench/soak/verify.js';
import { growth } from '../../bench/soak/rss.js';
import { jobsToAsk, Mix, retryPauseMs, type SoakJob } from '../../bench/soak/mix.js';
import type { Answer, ArcClient, Credentials } from '../../bench/harness/client.js';
import { parseScenarios, SCENARIO_NAMES } from '../../bench/harness/args.js';
import { BenchError } from '../../bench/harness/failures.js';

it('the tally counts 5xx by route, items included, and transport failures apart from answers', () => {
  const t = new Tally();
  t.answer('GET jobs', 200, 3);
  t.answer('PUT session/<file>', 500, 5, Buffer.from('{"code":"CE_ERR_INTERNAL"}'));
  t.answer('PUT session/<file>', 201, 4);
  t.item('POST jobs?action=kill', 500, 'Internal');
  t.item('POST jobs?action=kill', 202, '');
  t.transport('GET jobs', new BenchError('closed', 'https://127.0.0.1:1/arex closed the connection'));
  assert.equal(t.requests, 3);
  assert.equal(t.fiveXx, 2);
  assert.equal(t.transportFailures, 1);
  assert.match(t.fiveXxText(), /PUT session\/<file>: 1 × 500 \(e\.g\. "500 \{"code":"CE_ERR_INTERNAL"\}"\)/);
  assert.match(t.fiveXxText(), /POST jobs\?action=kill \[item\]: 1 × 500/);
  assert.match(t.transportText(), /GET jobs: 1 × <endpoint> closed the connection/);
});

it('a token on two ledger lines is a job that ran twice; the job script appends token and id', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-ledger-'));
  try {
    const l = await makeLedger(dir);
    appendFileSync(l.path, 'a1 id1\nb2 id2\na1 id1\n');
    const runs = await runsByToken(l);
    assert.equal(runs.get('a1'), 2);
    assert.equal(runs.get('b2'), 1);
    assert.match(readFileSync(l.script, 'utf8'), /echo "\$1 \$RUNTIME_JOB_ID \$\(id -un\)" >> /);
    assert.match(soakJob(l, 'tok', 30, true), /\(arguments="tok" "30"\).*\(inputfiles=\("in\.dat" ""\)\)$/);
    assert.doesNotMatch(soakJob(l, 'tok', 0, false), /inputfiles/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('the checks name each kind of miss, and pass when there is none', () => {
  const ok: Verdict = {
    acknowledged: 3,
    cleaned: 1,
    states: { FINISHED: 2 },
    missing: [],
    cleanedUnanswered: 0,
    notEnded: {},
    ranTwice: {},
    finishedNotRun: [],
    failed: {},
    settleS: 1,
  };
  assert.equal(verdictOk(ok), true);
  assert.deepEqual(verdictProblems(ok), []);
  const bad: Verdict = {
    ...ok,
    missing: ['m'],
    notEnded: { a: 'RUNNING quick', b: 'RUNNING kill' },
    ranTwice: { t: 2 },
    finishedNotRun: ['f (upload)'],
    failed: { x: "quick: The session directory of job x was taken by another account's directory" },
  };
  assert.equal(verdictOk(bad), false);
  const p = verdictProblems(bad).join('\n');
  assert.match(p, /1 acknowledged jobs missing \(404\): m/);
  assert.match(p, /2 jobs not ended after 1 s \(1 RUNNING quick, 1 RUNNING kill\)/);
  assert.match(p, /1 jobs ran more than once: t ×2/);
  assert.match(p, /1 jobs FINISHED without running: f \(upload\)/);
  assert.match(p, /1 jobs FAILED, none asked to: x \(quick: The session directory of job x was taken/);
  assert.equal(verdictOk({ ...ok, failed: { y: 'kill: any reason' } }), false, 'a failure alone fails the run');
});

it('RSS growth is measured between the medians of the minute after the warm-up and the last minute', () => {
  // V8's collection cycle: samples swing by 20 MiB around a level that does not move.
  const samples = Array.from({ length: 301 }, (_, i) => ({ s: i * 2, mib: (i * 2) % 6 === 0 ? 180 : 200 }));
  assert.equal(samples[30]?.mib, 180, 'the first sample after the warm-up, low in the swing');
  samples[300] = { s: 600, mib: 230 }; // the last one, high in it
  const g = growth(samples, 60);
  assert.ok(g);
  assert.equal(g.growthPct, 0, 'single samples said +28 %');
  // A level that rises is seen.
  const rising = samples.map((x) => ({ s: x.s, mib: x.mib + (x.s >= 540 ? 30 : 0) }));
  assert.equal(growth(rising, 60)?.growthMiB, 30);
  assert.equal(growth([], 60), undefined);
  assert.equal(growth([{ s: 0, mib: 100 }], 60), undefined, 'no sample after the warm-up');
  // A short run: two windows of half the time after the warm-up each.
  const short = Array.from({ length: 21 }, (_, i) => ({ s: i * 2, mib: i < 15 ? 100 : 120 }));
  assert.deepEqual(growth(short, 10), { warmMiB: 100, endMiB: 120, growthMiB: 20, growthPct: 20 });
});

it('soak runs only when named: not in the default list nor in all', () => {
  assert.deepEqual(parseScenarios(['soak']), ['soak']);
  assert.deepEqual(parseScenarios(['status,soak']), ['status', 'soak']);
  assert.equal(parseScenarios(undefined).includes('soak'), false);
  assert.deepEqual(parseScenarios(['all']), [...SCENARIO_NAMES]);
});

it('the mix asks about every open job of a client in turn, not only its newest, so every end is seen and cleaned', () => {
  const jobs = new Map<string, SoakJob>();
  const mine: string[] = [];
  for (let i = 0; i < 40; i++) {
    const id = `j${i}`;
    jobs.set(id, { id, user: 0, token: id, kind: 'quick', cleaned: false, uploaded: false, asked: 0 });
    mine.push(id);
  }
  (jobs.get('j5') as SoakJob).state = 'FINISHED';
  const first = jobsToAsk(mine, jobs, 10, 1);
  assert.deepEqual(first, ['j39', 'j38', 'j37', 'j36', 'j35', 'j34', 'j33', 'j32', 'j31', 'j30'], 'the newest first');
  const seen = new Set(first);
  for (let round = 2; round <= 4; round++) for (const id of jobsToAsk(mine, jobs, 10, round)) seen.add(id);
  assert.equal(seen.size, 39, 'every open job asked about within four requests');
  assert.ok(!seen.has('j5'), 'a job seen ended is not asked about again');
});

// A PUT refused with 429 (the per-identity cap) used to be retried only after the run, so
// its job waited in PREPARING for the whole time allowed for uploads and such jobs piled up
// through a soak. The mix retries it now, after the Retry-After, as a real client does.
it('the mix retries an upload refused with 429, after its Retry-After', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-mix-'));
  try {
    const ledger = await makeLedger(dir);
    const puts: number[] = [];
    let done = false;
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({
      status,
      reason: '',
      headers,
      body: Buffer.from(JSON.stringify(body)),
      ms: 1,
    });
    const client = {
      restBase: '/arex/rest/1.0',
      servicePath: '/arex',
      origin: 'https://127.0.0.1:1',
      request(method: string, path: string): Promise<Answer> {
        if (method === 'PUT') {
          puts.push(Date.now());
          if (puts.length < 3) return Promise.resolve(answer(429, {}, { 'retry-after': '0.1' }));
          done = true;
          return Promise.resolve(answer(200, {}));
        }
        if (path.endsWith('action=new'))
          return Promise.resolve(
            answer(201, {
              job: [{ 'status-code': '201', reason: 'Created', id: `j${Date.now()}`, state: 'ACCEPTING' }],
            }),
          );
        return Promise.resolve(answer(201, { job: [] }));
      },
    } as unknown as ArcClient;
    const mix = new Mix({
      users: [{ name: 'alice', client, creds: {} as Credentials }],
      clients: 1,
      ledger,
      stop: () => done,
      runId: 't',
    });
    await mix.run();
    assert.equal(puts.length, 3, 'two refusals, then the upload');
    assert.ok((puts[2] as number) - (puts[1] as number) >= 90, 'waited for the Retry-After');
    const uploads = [...mix.jobs.values()].filter((j) => j.kind === 'upload');
    assert.equal(uploads.length, 1);
    assert.equal(uploads[0]?.uploaded, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('the pause before retrying a 429 follows Retry-After, capped at 2 s', () => {
  assert.equal(retryPauseMs('1'), 1000);
  assert.equal(retryPauseMs(['0.5']), 500);
  assert.equal(retryPauseMs('3600'), 2000);
  for (const none of [undefined, 'soon', '-1']) {
    const ms = retryPauseMs(none);
    assert.ok(ms >= 200 && ms < 500, String(ms));
  }
});
