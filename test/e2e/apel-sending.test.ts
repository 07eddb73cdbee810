// Accounting sent to APEL by the real service, against the fake messaging service
// (test/helpers/fake-ams.ts). Crash safety: the service is killed with SIGKILL again and
// again while it sends, half the time right after the messaging service acknowledged a
// message (before the service could mark it), half the time at a random moment; after
// the last start every record has arrived, signed by the host certificate, and each
// crash repeated at most one message (the same one, the same text). Summaries: whole
// months, logged and metered; `ceres accounting republish` sends a range again, and
// refuses bad dates clearly.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { APEL_HOST, apelConfig, apelSite, jobIdsOf, jobsIn, withSiteDb, type ApelSite } from '../helpers/apel-site.js';
import { insertRecords } from '../helpers/accounting-records.js';
import { removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { sample, scrape } from '../ops/scrape.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const OCT = Date.UTC(2026, 9, 1);
const NOV = Date.UTC(2026, 10, 1);
const HOST = APEL_HOST;

describe('accounting to APEL: nothing lost across kill -9, at most one message repeated per crash', () => {
  let s: ApelSite;
  let ids: string[];
  before(async () => {
    s = await apelSite('apel-crash');
    withSiteDb(s, (db) => (ids = insertRecords(db, 1500, { fromMs: OCT, stepMs: 60_000 })));
  });
  after(async () => {
    await s.ams.close();
    removeDir(s.dir);
  });

  it('every record arrives once the sending is done; each crash repeats one message at most', async () => {
    // A generous time limit: a publish that times out after the fake service took it would be
    // sent again within the same run (no crash's doing), and this machine may be loaded.
    const cfg = apelConfig(s, { messages: 'individual', batchSize: 40, timeoutSeconds: 120 });
    // Each run of the service fetches its own token at its first send and keeps it: the token a
    // message carries names the run that sent it, even when the message reaches the fake service
    // only after that run was killed (bytes already on the loopback socket are still delivered).
    const crashes: { kind: 'at-ack' | 'random'; firstToken: number; stoppedAt?: string }[] = [];
    for (let round = 0; round < 6; round++) {
      const kind = round % 2 === 0 ? 'at-ack' : 'random';
      const crash: (typeof crashes)[number] = { kind, firstToken: s.ams.issued.length };
      const before = s.ams.received.length;
      const ceres: RunningCeres = await startCeres({ stateDir: s.stateDir, config: cfg });
      const pid = ceres.child.pid!;
      const dead = new Promise((r) => ceres.child.once('exit', r));
      if (kind === 'at-ack') {
        // Its (2 + round)-th message of this run: the service is stopped (SIGSTOP) before the
        // acknowledgement is written and killed once it is, so it can never mark it.
        let n = 0;
        s.ams.beforeAnswer = (got) => {
          if (++n !== 2 + round) return;
          crash.stoppedAt = got[0]!.empaid;
          process.kill(pid, 'SIGSTOP');
        };
        s.ams.onPublished = () => {
          if (n === 2 + round) process.kill(pid, 'SIGKILL');
        };
      } else {
        await until(() => s.ams.received.length > before, 'a message of this run', 60_000);
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 150)));
        process.kill(pid, 'SIGKILL');
      }
      await dead;
      s.ams.onPublished = undefined;
      s.ams.beforeAnswer = undefined;
      crashes.push(crash);
    }
    const lastRun = s.ams.issued.length;
    const ceres = await startCeres({ stateDir: s.stateDir, config: cfg });
    try {
      await until(
        () => new Set(jobIdsOf(s.ams.texts())).size === ids.length,
        'every record at the fake service',
        120_000,
      );
    } finally {
      await stopCeres(ceres);
    }
    await s.ams.verified();
    const got = jobIdsOf(s.ams.texts());
    assert.deepEqual([...new Set(got)].sort(), [...ids].sort(), 'every record arrived');
    for (const m of s.ams.received) {
      assert.equal(m.signatureError, undefined);
      assert.match(m.signer ?? '', new RegExp(`CN=${HOST.replace(/\./g, '\\.')}`));
    }
    assert.match(s.ams.texts()[0]!, new RegExp(`^MachineName: ${HOST.replace(/\./g, '\\.')}\\r?$`, 'm'));
    assert.notEqual(HOST, hostname());
    // The run (0..6) a message was sent by, from the position of its token among those issued.
    const firsts = [...crashes.map((c) => c.firstToken), lastRun];
    const runOf = (token: string): number => {
      const i = s.ams.issued.indexOf(token);
      assert.ok(i >= 0, `a message with a token the fake service never issued: ${token}`);
      return firsts.findLastIndex((f) => f <= i);
    };
    // Repeats: a message (empaid) received again, with the same text; it is left by the crash of
    // the run that sent the copy before it.
    const last = new Map<string, { text: string | undefined; run: number }>();
    const repeatsLeftBy = crashes.map(() => 0);
    const resent = new Set<string>();
    const runs: string[][] = firsts.map(() => []);
    for (const m of s.ams.received) {
      const run = runOf(m.token);
      runs[run]!.push(m.empaid!.replace(/^.*-/, ''));
      const prev = last.get(m.empaid!);
      last.set(m.empaid!, { text: m.text, run });
      if (prev === undefined) continue;
      assert.equal(m.text, prev.text, 'a repeat is the same message');
      // No run sends a message twice: only a crash repeats one.
      assert.notEqual(run, prev.run, `message ${m.empaid} sent twice by run ${run}`);
      repeatsLeftBy[prev.run]! += 1;
      resent.add(m.empaid!);
    }
    const summary = `${JSON.stringify(crashes.map((c, k) => ({ ...c, repeats: repeatsLeftBy[k] })))}; messages per run: ${JSON.stringify(runs)}`;
    // At most one message repeated per crash...
    assert.ok(
      repeatsLeftBy.every((n) => n <= 1),
      summary,
    );
    // ...and a kill between the acknowledgement and the mark does repeat that message (the window is hit).
    for (const c of crashes.filter((c) => c.kind === 'at-ack')) {
      assert.ok(c.stoppedAt !== undefined && resent.has(c.stoppedAt), summary);
    }
  });
});

describe('accounting to APEL: summaries, logs, metrics and republish', () => {
  let s: ApelSite;
  let ceres: RunningCeres;
  before(async () => {
    s = await apelSite('apel-summaries');
    withSiteDb(s, (db) => {
      insertRecords(db, 40, { fromMs: OCT, stepMs: 3600_000 });
      insertRecords(db, 10, { fromMs: NOV, stepMs: 3600_000, prefix: 'nov' });
    });
    ceres = await startCeres({
      stateDir: s.stateDir,
      config: {
        ...apelConfig(s, { messages: 'summaries' }, { metrics: { listen: '127.0.0.1:0' } }),
        log: { level: 'info' },
      },
    });
  });
  after(async () => {
    await stopCeres(ceres);
    await s.ams.close();
    removeDir(s.dir);
  });
  const cli = (...args: string[]) =>
    spawnSync(process.execPath, [MAIN, 'accounting', ...args, '--state-dir', s.stateDir], { encoding: 'utf8' });

  it('sends each month as summaries and a sync message, logged with counts and metered', async () => {
    await until(() => s.ams.received.length >= 4, 'two months sent', 60_000);
    const [octSum, octSync, novSum, novSync] = s.ams.texts();
    assert.match(octSum!, /^APEL-summary-job-message: v0\.2\r?\n/);
    assert.match(octSum!, /^Month: 10\r?$/m);
    assert.equal(jobsIn(octSum!), 40);
    assert.match(octSync!, /^APEL-sync-message: v0\.1\r?\n/);
    assert.equal(jobsIn(octSync!), 40);
    assert.equal(jobsIn(novSum!), 10);
    assert.equal(jobsIn(novSync!), 10);
    // The service logs and counts a send after the acknowledgement the fake has already
    // recorded (and log lines are written in batches): wait for both.
    const sentLine = /"kind":"summary","records":3,.*"msg":"accounting message sent to APEL"/;
    await until(() => sentLine.test(ceres.output()), 'the send logged', 30_000);
    await until(
      async () => sample(await scrape(ceres), 'ceres_apel_messages_total', { kind: 'sync', result: 'sent' }) === 2,
      'the sends counted',
      30_000,
    );
    const m = await scrape(ceres);
    assert.equal(sample(m, 'ceres_apel_messages_total', { kind: 'summary', result: 'sent' }), 2);
    assert.equal(sample(m, 'ceres_apel_messages_total', { kind: 'sync', result: 'sent' }), 2);
    assert.equal(sample(m, 'ceres_apel_unqueued_records'), 0);
    assert.equal(sample(m, 'ceres_apel_unsent_messages'), 0);
  });

  it('republish sends the months of a range again, whole', async () => {
    const before = s.ams.received.length;
    const r = cli('republish', '--from', '2026-10-02', '--to', '2026-10-03');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^16 record\(s\) queued again for APEL/);
    await until(() => s.ams.received.length >= before + 2, 'October again', 60_000);
    const again = s.ams.texts().slice(before);
    assert.equal(jobsIn(again[0]!), 40, 'the whole month, not only the range');
    assert.match(again[0]!, /^Month: 10\r?$/m);
  });

  it('republish refuses bad dates and an empty range clearly, and says when nothing matched', () => {
    for (const [args, msg] of [
      [['--from', '2026-13-01', '--to', '2026-12'], /--from: '2026-13-01' is not a date/],
      [['--from', '2026-11', '--to', '2026-10'], /--to \(2026-10\) must be after --from \(2026-11\)/],
      [['--from', 'yesterday', '--to', '2026-10'], /is not a date; use YYYY-MM-DD or YYYY-MM/],
    ] as const) {
      const r = cli('republish', ...args);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, msg);
    }
    const none = cli('republish', '--from', '2020-01', '--to', '2020-02');
    assert.equal(none.status, 0);
    assert.match(none.stdout, /no record of a job that ended in \[2020-01, 2020-02\)/);
  });
});
