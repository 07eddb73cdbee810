// Operations with the real service and the real command (child processes): draining
// (503 with the reason, GLUE2 ServingState, kept across a restart), config check,
// accounting records (once per run, across kill -9, kept after clean) and their export,
// backup and restore, and a database from a newer release refused.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { admin, ceresCli } from './cli.js';
import { databaseAtSchema } from '../helpers/old-database.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

describe('ceres admin: drain, config check, accounting, backup, schema', () => {
  const dir = tempDir('admin-ops');
  const stateDir = join(dir, 'state');
  const config = {
    cluster: {
      name: 'testsite',
      queues: [{ name: 'main' }, { name: 'short' }],
      runtimeEnvironments: [{ name: 'ENV/TEST', script: 'rte/test.sh' }],
    },
  };
  const configFile = join(stateDir, 'test-config.json');
  let ceres: RunningCeres;
  let c: Client;
  const start = async (): Promise<void> => {
    ceres = await startCeres({ stateDir, config });
    c = Client.forUser(ceres);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    await c.close();
    await stopCeres(ceres, signal);
  };
  const records = (): { job_id: string }[] => {
    const db = new Database(join(stateDir, 'ceres.db'), { readonly: true });
    try {
      return db.prepare('SELECT * FROM accounting_records ORDER BY job_id').all() as { job_id: string }[];
    } finally {
      db.close();
    }
  };
  before(async () => {
    // A relative RTE script: relative to the config file (which lives in the state dir here).
    mkdirSync(join(stateDir, 'rte'), { recursive: true });
    writeFileSync(join(stateDir, 'rte', 'test.sh'), 'export CERES_TEST_RTE=yes\n');
    chmodSync(join(stateDir, 'rte', 'test.sh'), 0o755);
    await start();
  });
  after(async () => {
    await stop();
    removeDir(dir);
  });

  it('drain: submissions get 503 with the reason, the info document says draining, running jobs continue; kept across a restart; undrain accepts again', async () => {
    const [running] = await c.submit('&(executable="/bin/sleep")(arguments="2")');
    const d = await admin(stateDir, 'drain', '--reason', 'disk replacement until 14:00');
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /\(service\)\s+\S+\s+\S+\s+disk replacement until 14:00/);
    const r = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")');
    assert.equal(r.status, 503);
    assert.match(
      r.text,
      /the service is draining \(no new jobs accepted; running jobs continue\): disk replacement until 14:00/,
    );
    let info = '';
    await until(async () => /"ServingState":"draining"/.test((info = (await c.req('GET', '/rest/1.1/info')).text)));
    assert.doesNotMatch(info, /"ServingState":"production"/);
    assert.equal((await c.waitFor([running.id], FINAL, 30_000)).get(running.id), 'FINISHED');
    assert.match(
      (await admin(stateDir, 'status')).stdout,
      /accepting jobs: no, draining: service \(disk replacement until 14:00\)/,
    );
    await stop();
    await start();
    assert.equal(
      (await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")')).status,
      503,
      'still draining after a restart',
    );
    const u = await admin(stateDir, 'undrain');
    assert.equal(u.code, 0, u.stderr);
    assert.match(u.stdout, /nothing is drained/);
    const [ok] = await c.submit('&(executable="/bin/true")');
    assert.equal(ok['status-code'], '201');
    await until(async () => !/"ServingState":"draining"/.test((await c.req('GET', '/rest/1.1/info')).text));
  });

  it('drain of one queue refuses only that queue (per item 503); bad drain/undrain requests fail', async () => {
    assert.equal((await admin(stateDir, '--config', configFile, 'drain', '--queue', 'short', '--reason', 'x')).code, 0);
    const r = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")(queue="short")');
    assert.match(r.text, /"status-code":"503"/);
    assert.match(r.text, /queue short is draining/);
    assert.equal((await c.submit('&(executable="/bin/true")(queue="main")'))[0]['status-code'], '201');
    // The info document is cached for a second: the drain shows within that.
    let info = '';
    await until(async () => /"ServingState":"draining"/.test((info = (await c.req('GET', '/rest/1.1/info')).text)));
    assert.match(info, /"ServingState":"production"/, 'the service and the other queue stay in production');
    const unknown = await admin(stateDir, '--config', configFile, 'drain', '--queue', 'nosuch');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /'nosuch' is not a configured queue \(main, short\)/);
    const notDrained = await admin(stateDir, 'undrain', '--queue', 'main');
    assert.equal(notDrained.code, 1);
    assert.match(notDrained.stderr, /queue main is not drained/);
    assert.equal((await admin(stateDir, 'undrain')).code, 1, 'the service itself is not drained');
    assert.equal((await admin(stateDir, 'undrain', '--all', '--queue', 'x')).code, 1);
    assert.equal((await admin(stateDir, 'undrain', '--all')).code, 0);
  });

  it('config check: a good file passes; bad JSON, a bad value and a missing file each fail with the reason', async () => {
    const ok = await admin(stateDir, 'config', 'check', configFile);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /OK/);
    const f = (name: string, text: string): string => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const bad = await admin(stateDir, 'config', 'check', f('bad.json', '{"listen": '));
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /not valid JSON/);
    const value = await admin(stateDir, 'config', 'check', f('value.json', '{"cluster": {"queues": []}}'));
    assert.equal(value.code, 1);
    assert.match(value.stderr, /cluster\.queues/);
    const missing = await admin(
      stateDir,
      'config',
      'check',
      f('rte.json', '{"cluster": {"runtimeEnvironments": [{"name": "X", "script": "nowhere/x.sh"}]}}'),
    );
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      new RegExp(`cluster\\.runtimeEnvironments\\.0\\.script': ${dir}/nowhere/x\\.sh: does not exist`),
    );
    assert.equal((await admin(stateDir, 'config', 'check', join(dir, 'absent.json'))).code, 1);
  });

  it('accounting: one record per finished run with its figures, across kill -9 and restart, kept after clean; a lost record is written at the next start', async () => {
    const [a] = await c.submit(
      '&(executable="/bin/sh")(arguments="-c" "test $CERES_TEST_RTE = yes")(runtimeenvironment="ENV/TEST")(count=2)',
    );
    assert.equal(
      (await c.waitFor([a.id], FINAL)).get(a.id),
      'FINISHED',
      'the relative RTE script was found and sourced',
    );
    const mine = () => records().filter((r) => r.job_id === a.id) as any[];
    // The record is written by the job's end step, right after its final state is stored.
    await until(async () => mine().length === 1);
    const rec = mine()[0];
    assert.equal(rec.final_state, 'FINISHED');
    assert.equal(rec.exit_code, 0);
    assert.equal(rec.cores, 2);
    assert.equal(rec.queue, 'main');
    assert.match(rec.owner, /CN=/);
    assert.equal(rec.endpoint, ceres.url);
    assert.deepEqual(JSON.parse(rec.runtime_envs), ['ENV/TEST']);
    assert.ok(rec.wall_seconds >= 0 && rec.user_cpu_seconds >= 0 && rec.system_cpu_seconds >= 0);
    await stop('SIGKILL');
    await start();
    assert.equal(mine().length, 1, 'not written again after kill -9 and restart');
    await stop();
    const db = new Database(join(stateDir, 'ceres.db'));
    db.prepare('DELETE FROM accounting_records WHERE job_id = ?').run(a.id);
    db.close();
    await start();
    // Written in the background after the start (src/service/operations.ts).
    await until(() => Promise.resolve(mine().length === 1));
    assert.equal(mine().length, 1, 'the run that ended without its record is recorded at start');
    assert.equal((await c.action('clean', [a.id]))[0]['status-code'], '202');
    await until(async () => (await admin(stateDir, 'show', a.id)).code === 1);
    assert.equal(mine().length, 1, 'the record survives the clean');
  });

  it('accounting export writes APEL summaries and sync messages and one usage record per run', async () => {
    const out = join(dir, 'export');
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const r = await ceresCli([
      'accounting',
      '--state-dir',
      stateDir,
      'export',
      '--from',
      today,
      '--to',
      tomorrow,
      '--out',
      out,
      '--site',
      'TEST-SITE',
      '--benchmark',
      'HEPscore23=10.5',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const n = records().length;
    assert.match(r.stdout, new RegExp(`^${n} record\\(s\\) exported`));
    const apel = readdirSync(join(out, 'apel'));
    const summary = readFileSync(
      join(
        out,
        'apel',
        apel.find((f) => f.startsWith('summaries-'))!,
      ),
      'utf8',
    );
    assert.match(summary, /^APEL-summary-job-message: v0\.2\nSite: TEST-SITE\n/);
    assert.match(summary, /ServiceLevelType: HEPscore23\nServiceLevel: 10\.5/);
    assert.match(summary, /Processors: 2/);
    const jobs = [...summary.matchAll(/NumberOfJobs: (\d+)/g)].reduce((s, m) => s + Number(m[1]), 0);
    assert.equal(jobs, n);
    const syncText = readFileSync(
      join(
        out,
        'apel',
        apel.find((f) => f.startsWith('sync-'))!,
      ),
      'utf8',
    );
    assert.match(
      syncText,
      /^APEL-sync-message: v0\.1\nSite: TEST-SITE\nSubmitHost: https:\/\/\S+\nNumberOfJobs: \d+\nMonth: \d+\nYear: \d{4}\n%%\n/,
    );
    assert.equal(
      [...syncText.matchAll(/NumberOfJobs: (\d+)/g)].reduce((s, m) => s + Number(m[1]), 0),
      n,
      'jobs per month and endpoint add up',
    );
    const urs = readdirSync(join(out, 'usage-records'));
    assert.equal(urs.length, n);
    const ur = readFileSync(join(out, 'usage-records', urs[0]!), 'utf8');
    assert.match(ur, /<urf:UsageRecord xmlns:urf="http:\/\/schema\.ogf\.org\/urf\/2003\/09\/urf"/);
    assert.match(ur, /<urf:WallDuration>PT\d+S<\/urf:WallDuration>/);
    assert.match(ur, /<urf:Site>TEST-SITE<\/urf:Site>/);
  });

  it('accounting export refuses bad dates, an empty period, a bad benchmark and a missing site', async () => {
    const exp = (...a: string[]) =>
      ceresCli(['accounting', '--state-dir', stateDir, 'export', '--out', join(dir, 'x'), ...a]);
    const bad = await exp('--from', '2026-13-01', '--to', '2027-01', '--site', 's');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--from: '2026-13-01' is not a date/);
    const back = await exp('--from', '2026-02', '--to', '2026-01', '--site', 's');
    assert.equal(back.code, 1);
    assert.match(back.stderr, /--to \(2026-01\) must be after --from/);
    const bench = await exp('--from', '2026-01', '--to', '2026-02', '--site', 's', '--benchmark', 'fast');
    assert.equal(bench.code, 1);
    assert.match(bench.stderr, /--benchmark: 'fast' is not TYPE=VALUE/);
    const site = await exp('--from', '2026-01', '--to', '2026-02');
    assert.equal(site.code, 1);
    assert.match(site.stderr, /--site is required/);
  });

  it('backup while running, restore into a new directory, and the service starts there with the same jobs; bad restores fail', async () => {
    const [j] = await c.submit('&(executable="/bin/echo")(arguments="kept")(stdout="o.txt")');
    await c.waitFor([j.id], FINAL);
    const file = join(dir, 'backup.tar.gz');
    const b = await admin(stateDir, 'backup', file);
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /backup written to .*ceres\.db, delegations, control, lrms, pki/);
    const before = (await admin(stateDir, '--json', 'list')).json();
    const busy = await admin(stateDir, 'restore', file);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /a service is running on/);
    const nonEmpty = join(dir, 'nonempty');
    mkdirSync(nonEmpty);
    writeFileSync(join(nonEmpty, 'x'), '');
    const ne = await admin(nonEmpty, 'restore', file);
    assert.equal(ne.code, 1);
    assert.match(ne.stderr, /is not empty/);
    writeFileSync(join(dir, 'junk.tar.gz'), 'not a tarball');
    const junk = await admin(join(dir, 'junk-target'), 'restore', join(dir, 'junk.tar.gz'));
    assert.equal(junk.code, 1);
    assert.match(junk.stderr, /not a gzip-compressed tar archive/);
    const restored = join(dir, 'restored');
    const r = await admin(restored, 'restore', file);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await admin(restored, '--json', 'list')).json(), before);
    // The database is the service's alone from the archive on (docs/operations.md, "State":
    // 0600), not only from the next start: the restore has opened the state directory.
    assert.match(execFileSync('tar', ['-tvzf', file], { encoding: 'utf8' }), /^-rw------- .* ceres\.db$/m);
    assert.equal(statSync(join(restored, 'ceres.db')).mode & 0o777, 0o600);
    const other = await startCeres({ stateDir: restored });
    try {
      const oc = Client.forUser(other);
      assert.equal((await oc.status([j.id])).get(j.id), 'FINISHED');
      await oc.close();
    } finally {
      await stopCeres(other);
    }
  });

  it('a database from a newer release is refused at start and by the admin command, with what to do', async () => {
    const copy = join(dir, 'newer');
    assert.equal((await admin(copy, 'restore', join(dir, 'backup.tar.gz'))).code, 0);
    const db = new Database(join(copy, 'ceres.db'));
    db.prepare('INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)').run();
    db.close();
    const outcome = await startCeres({ stateDir: copy }).then(
      async (s) => (await stopCeres(s), 'the service started'),
      (e: Error) => e.message,
    );
    assert.match(
      outcome,
      /schema version 999, newer than this ceres supports \(\d+\).*restore a backup made before the upgrade/s,
    );
    const a = await admin(copy, 'list');
    assert.equal(a.code, 1);
    assert.match(a.stderr, /schema version 999, newer than this ceres/);
    assert.ok(existsSync(join(copy, 'ceres.db')));
  });

  it('a database of an earlier release is refused by the admin command until the upgraded service has started once; the start migrates it and keeps its jobs', async () => {
    // docs/operations.md, "Upgrade": the admin commands refuse an older schema (they never
    // migrate: the service does, under its lock), and say to start the service once.
    const old = join(dir, 'older');
    mkdirSync(old, { recursive: true });
    databaseAtSchema(join(old, 'ceres.db'), 11, { id: 'oldjob1', state: 'FINISHED', restState: 'FINISHED' });
    const refused = await admin(old, 'list');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /schema version 11, older than this ceres \(\d+\): start the upgraded service once/);
    const s = await startCeres({ stateDir: old });
    await stopCeres(s);
    const migrated = await admin(old, 'list', '--json');
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.match(migrated.stdout, /oldjob1/);
  });
});

async function until(cond: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition not met in time');
}
