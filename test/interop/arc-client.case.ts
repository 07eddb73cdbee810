// Interoperability: the real NorduGrid ARC client (Debian nordugrid-arc-client 6.x with the
// REST plugin, REST 1.0) drives every job operation against `ceres serve` over real TLS with
// the dev PKI: arcproxy, arcinfo, arcsub (xRSL and ADL, delegation, client-side upload),
// arcstat, arccat, arcget, arcrenew, arckill, arcresume, arcsync, arcclean.
//
// Skipped only where the client is not installed and CERES_REQUIRE_INTEROP is unset;
// CI sets CERES_REQUIRE_INTEROP=1, so there a missing client fails the run.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { ArcClient, devUserClient, interopRequired, missingArcCommands, type RunResult } from './arc-cli.js';
import { DATA_KEPT, dataJob, dataJobStderr, dataJobStdout, rerunJob, sleepJob, type Language } from './descriptions.js';
import { sleepProcesses } from './processes.js';

const CERES_MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

const missing = missingArcCommands();
const required = interopRequired();
const skip =
  missing.length > 0 && !required
    ? `ARC client not installed (missing ${missing.join(', ')}): install nordugrid-arc-client, nordugrid-arc-plugins-arcrest ` +
      'and nordugrid-arc-plugins-needed to run it; CERES_REQUIRE_INTEROP=1 makes this a failure'
    : false;

/** Client-visible states (arcstat "State:"), polled with a short interval: Ceres jobs take well under a second. */
const POLL_MS = 150;
const STATE_TIMEOUT_MS = 60_000;
const INPUT_SIZE = 300_000;
/** arcstat -l lists delegation ids one per line under this heading; a job without one shows a blank line. */
const DELEGATION_LINE = /^[ \t]*Delegation IDs:[ \t]*\n[ \t]+\S+[ \t]*$/m;

/** One way to run Ceres under the client (its batch backend and what that needs). */
export interface LifecycleOptions {
  /** The describe() title. */
  readonly title: string;
  /** Why the whole suite cannot run here (besides a missing client). */
  readonly skip?: string;
  /**
   * Called first inside the suite (it may register before/after hooks, e.g. to start a
   * batch system); the function it returns gives configuration merged into the service's.
   */
  readonly prepare?: () => () => Record<string, unknown>;
  /** The queue arcinfo shows (`Mapping queue:`). */
  readonly queue?: string;
}

export function arcClientLifecycle(o: LifecycleOptions): void {
  describe(o.title, { skip: skip || o.skip || false }, () => {
    const extraConfig = o.skip === undefined ? o.prepare?.() : undefined;
    let ceres: RunningCeres | undefined;
    let work: string;
    let arc: ArcClient;
    let url: string;
    let jobList: string;
    /** Every job the life cycle submitted, for arcsync and arcclean. */
    const submitted: string[] = [];

    before(async () => {
      if (missing.length > 0) {
        throw new Error(
          `CERES_REQUIRE_INTEROP is set but the ARC client is not installed (missing ${missing.join(', ')}); ` +
            'install nordugrid-arc-client nordugrid-arc-plugins-arcrest nordugrid-arc-plugins-needed',
        );
      }
      work = tempDir('interop');
      ceres = await startCeres({
        stateDir: join(work, 'state'),
        config: { log: { level: 'info' }, ...(extraConfig?.() ?? {}) },
      });
      url = ceres.url;
      jobList = join(work, 'jobs.dat');
      const c = ceres;
      arc = await devUserClient(work, c);
      // The REST submission plugin is a separate package; without it arcsub cannot reach a REST CE.
      const plugins = await arc.ok('arcsub', ['-P']);
      arc.expect(
        plugins,
        /^\s*REST\b/m,
        'arcsub lists no REST submission plugin (install nordugrid-arc-plugins-arcrest)',
      );
    });

    after(async () => {
      if (ceres) await stopCeres(ceres);
      // CERES_INTEROP_KEEP=1 keeps the client's files and the service state for a post-mortem.
      if (work && process.env.CERES_INTEROP_KEEP === '1') {
        if (ceres) writeFileSync(join(work, 'ceres.log'), ceres.output());
        console.log(`interop work directory kept: ${work}`);
      } else if (work) removeDir(work);
    });

    const stateOf = async (id: string): Promise<{ state: string | undefined; r: RunResult }> => {
      const r = await arc.run('arcstat', ['-j', jobList, id]);
      return { state: /^\s*State:\s*(\S.*?)\s*$/m.exec(r.stdout)?.[1], r };
    };

    /** Polls arcstat until the job's State matches; returns the states seen on the way. */
    const waitState = async (id: string, want: RegExp): Promise<string[]> => {
      const seen: string[] = [];
      const deadline = Date.now() + STATE_TIMEOUT_MS;
      for (;;) {
        const { state, r } = await stateOf(id);
        if (state !== undefined && seen[seen.length - 1] !== state) seen.push(state);
        if (state !== undefined && want.test(state)) return seen;
        if (Date.now() > deadline)
          throw new Error(
            arc.report(
              r,
              `job ${id} did not reach ${want} within ${STATE_TIMEOUT_MS / 1000} s (states seen: ${seen.join(' -> ') || 'none'})`,
            ),
          );
        await new Promise((res) => setTimeout(res, POLL_MS));
      }
    };

    const submit = async (lang: Language, description: string, name: string): Promise<string> => {
      const file = join(work, `${name}.${lang}`);
      writeFileSync(file, description);
      const r = await arc.ok('arcsub', [
        '-C',
        url,
        '-T',
        'arcrest',
        '-Q',
        'arcrest',
        '-j',
        jobList,
        '-o',
        join(work, 'ids.txt'),
        '-f',
        file,
      ]);
      const id = arc.expect(r, /^Job submitted with jobid: (\S+)$/m, 'arcsub printed no job id')[1] as string;
      // The client builds the job id from the submission URL: <service>/rest/1.0/jobs/<id>.
      assert.ok(
        id.startsWith(`${url}/rest/1.0/jobs/`),
        arc.report(r, `job id ${id} is not under ${url}/rest/1.0/jobs/`),
      );
      assert.match(id.slice(id.lastIndexOf('/') + 1), /^[A-Za-z0-9]+$/);
      submitted.push(id);
      return id;
    };

    const need = <T>(v: T | undefined, what: string): T => {
      if (v === undefined) throw new Error(`${what} is missing: an earlier step failed`);
      return v;
    };

    it('arcproxy -I shows a valid proxy of the dev user', async () => {
      const r = await arc.ok('arcproxy', ['-I', '-P', arc.setup.proxy]);
      arc.expect(r, /^Subject: .*CN=Ceres Dev User\/CN=\d+$/m, 'proxy subject');
      arc.expect(r, /^Time left for proxy: \d+ hours?/m, 'proxy lifetime');
    });

    it('arcinfo finds the computing service and its REST endpoint', async () => {
      const short = await arc.ok('arcinfo', ['-c', url]);
      arc.expect(short, /^Computing service: \S+/m, 'arcinfo short form');
      const long = await arc.ok('arcinfo', ['-l', '-c', url]);
      arc.expect(long, new RegExp(`^\\s*URL: ${escapeRe(url)}\\s*$`, 'm'), 'endpoint URL');
      arc.expect(long, /^\s*Interface: org\.nordugrid\.arcrest\s*$/m, 'REST interface');
      arc.expect(long, /^\s*1\.0\s*$/m, 'interface version 1.0');
      arc.expect(long, /^\s*nordugrid:xrsl\s*$/m, 'xRSL accepted');
      arc.expect(long, /^\s*emies:adl\s*$/m, 'ADL accepted');
      arc.expect(long, new RegExp(`^\\s*Mapping queue: ${o.queue ?? 'main'}\\s*$`, 'm'), `queue ${o.queue ?? 'main'}`);
    });

    it('arcinfo refuses a service whose CA the client does not trust', async () => {
      const emptyCaDir = join(work, 'no-cas');
      mkdirSync(emptyCaDir, { recursive: true });
      const untrusting = new ArcClient({ ...arc.setup, dir: join(work, 'untrusting'), caDir: emptyCaDir });
      const r = await untrusting.run('arcinfo', ['-c', url]);
      assert.notEqual(r.code, 0, untrusting.report(r, 'arcinfo succeeded without trusting the service CA'));
      untrusting.expectNot(r, /^Computing service:/m, 'a service behind an untrusted certificate was listed');
      untrusting.expect(r, /certificate/i, 'the TLS verification failure', true);
    });

    it('a user from a CA Ceres does not trust is refused, and the client shows why', async () => {
      // A second, unrelated development PKI: its user is valid in its own world only.
      const stranger = join(work, 'stranger-pki');
      await runNode([CERES_MAIN, 'pki', 'init', '--dir', stranger]);
      const bothCas = join(work, 'both-cas');
      mkdirSync(bothCas);
      for (const dir of [arc.setup.caDir, join(stranger, 'certificates')])
        for (const f of readdirSync(dir)) copyFileSync(join(dir, f), join(bothCas, f));
      const other = new ArcClient({
        ...arc.setup,
        dir: join(work, 'stranger'),
        proxy: join(stranger, 'userproxy.pem'),
        caDir: bothCas,
      });
      const info = await other.run('arcinfo', ['-c', url]);
      assert.notEqual(info.code, 0, other.report(info, 'arcinfo succeeded for an untrusted user'));
      other.expect(info, /Error 401\b/, "Ceres' refusal", true);
      const sub = await other.run('arcsub', [
        '-C',
        url,
        '-T',
        'arcrest',
        '-Q',
        'NONE',
        '-j',
        join(work, 'stranger.dat'),
        '-e',
        '&(executable="/bin/true")',
      ]);
      assert.notEqual(sub.code, 0, other.report(sub, 'arcsub succeeded for an untrusted user'));
      other.expectNot(sub, /Job submitted with jobid/, 'arcsub claims a job was submitted');
    });

    for (const lang of ['xrsl', 'adl'] as const) {
      describe(`${lang === 'xrsl' ? 'xRSL' : 'ADL'} job life cycle`, () => {
        const input = randomBytes(INPUT_SIZE);
        const marker = `${lang}-${randomInt(1_000_000)}`;
        const sleepSeconds = 100_000 + randomInt(800_000);
        let inputPath: string;
        let dataId: string | undefined;
        let sleepId: string | undefined;

        before(() => {
          inputPath = join(work, `in-${lang}.dat`);
          writeFileSync(inputPath, input);
        });

        it('arcsub submits a job with an input file the client uploads', async () => {
          dataId = await submit(
            lang,
            dataJob(lang, { name: `data-${lang}`, inputPath, inputSize: INPUT_SIZE, marker }),
            `data-${lang}`,
          );
          assert.match(readFileSync(join(work, 'ids.txt'), 'utf8'), new RegExp(`^${escapeRe(dataId)}$`, 'm'));
        });

        it('arcstat follows it to Finished; arcstat -l shows exit code 0, name and delegation', async () => {
          const id = need(dataId, 'data job');
          const seen = await waitState(id, /^(Finished|Failed|Killed)$/);
          assert.equal(seen[seen.length - 1], 'Finished', `states seen: ${seen.join(' -> ')}`);
          const r = await arc.ok('arcstat', ['-l', '-j', jobList, id]);
          arc.expect(r, /^\s*Exit Code: 0\s*$/m, 'exit code');
          arc.expect(r, new RegExp(`^\\s*Name: data-${lang}\\s*$`, 'm'), 'job name');
          arc.expect(r, DELEGATION_LINE, 'delegation id of the submission');
        });

        it('arccat prints stdout, stderr (-e) and the CE log (-l)', async () => {
          const id = need(dataId, 'data job');
          const out = await arc.ok('arccat', ['-j', jobList, id]);
          assert.equal(out.stdout, dataJobStdout(INPUT_SIZE, marker), arc.report(out, 'stdout differs'));
          const err = await arc.ok('arccat', ['-e', '-j', jobList, id]);
          assert.equal(err.stdout, dataJobStderr(marker), arc.report(err, 'stderr differs'));
          const log = await arc.ok('arccat', ['-l', '-j', jobList, id]);
          arc.expect(log, /-> FINISHED\b/, 'the CE log records the finish');
          // A file the session directory does not hold: the CE's 404 reaches the user.
          const none = await arc.run('arccat', ['-f', 'no-such-file.txt', '-j', jobList, id]);
          assert.notEqual(none.code, 0, arc.report(none, 'arccat of a missing file succeeded'));
          arc.expect(none, /\b404\b/, 'the 404 of the missing file', true);
        });

        it('arcget -k downloads exactly the kept files, byte for byte', async () => {
          const id = need(dataId, 'data job');
          const dl = join(work, `dl-${lang}`);
          mkdirSync(dl);
          const r = await arc.ok('arcget', ['-k', '-D', dl, '-j', jobList, id]);
          arc.expect(r, /successfully retrieved: 1\b/, 'arcget summary');
          const jobDir = join(dl, id.slice(id.lastIndexOf('/') + 1));
          assert.deepEqual(readdirSync(jobDir).sort(), [...DATA_KEPT], arc.report(r, 'downloaded files'));
          assert.ok(readFileSync(join(jobDir, 'copy.dat')).equals(input), 'copy.dat differs from the uploaded input');
          assert.equal(readFileSync(join(jobDir, 'out.txt'), 'utf8'), dataJobStdout(INPUT_SIZE, marker));
          assert.equal(readFileSync(join(jobDir, 'err.txt'), 'utf8'), dataJobStderr(marker));
          // -k keeps the job on the CE.
          assert.equal((await stateOf(id)).state, 'Finished');
        });

        it('arcrenew skips a finished job', async () => {
          const r = await arc.ok('arcrenew', ['-j', jobList, need(dataId, 'data job')]);
          arc.expect(r, /renewed: 0\b/, 'arcrenew summary');
        });

        it('arcrenew renews the delegation of a running sleep job', async () => {
          sleepId = await submit(lang, sleepJob(lang, `sleep-${lang}`, sleepSeconds), `sleep-${lang}`);
          await waitState(sleepId, /^Running$/);
          // RUNNING is reported once the batch job started; its payload follows within moments.
          await until(() => sleepProcesses(sleepSeconds).length > 0, 20_000);
          assert.equal(sleepProcesses(sleepSeconds).length, 1, `no running "sleep ${sleepSeconds}" process`);
          const r = await arc.ok('arcrenew', ['-j', jobList, sleepId]);
          arc.expect(r, /renewed: 1\b/, 'arcrenew summary');
        });

        it('arckill -k kills it: Killed, and the process is gone', async () => {
          const id = need(sleepId, 'sleep job');
          const r = await arc.ok('arckill', ['-k', '-j', jobList, id]);
          arc.expect(r, /successfully killed: 1\b/, 'arckill summary');
          const seen = await waitState(id, /^(Finished|Failed|Killed)$/);
          assert.equal(seen[seen.length - 1], 'Killed', `states seen: ${seen.join(' -> ')}`);
          await until(() => sleepProcesses(sleepSeconds).length === 0, 20_000);
          assert.deepEqual(
            sleepProcesses(sleepSeconds),
            [],
            `"sleep ${sleepSeconds}" still runs after the job was killed`,
          );
        });

        it('arcresume restarts a failed job that allows a rerun; it then finishes', async () => {
          const id = await submit(lang, rerunJob(lang, `rerun-${lang}`, 1), `rerun-${lang}`);
          const first = await waitState(id, /^(Finished|Failed|Killed)$/);
          assert.equal(first[first.length - 1], 'Failed', `states seen: ${first.join(' -> ')}`);
          const failed = await arc.ok('arcstat', ['-l', '-j', jobList, id]);
          arc.expect(failed, /^\s*Exit Code: 1\s*$/m, 'exit code of the failed attempt');
          const r = await arc.ok('arcresume', ['-j', jobList, id]);
          arc.expect(r, /resumed: 1\b/, 'arcresume summary');
          const second = await waitState(id, /^(Finished|Killed)$/);
          assert.equal(second[second.length - 1], 'Finished', `states seen after resume: ${second.join(' -> ')}`);
          const out = await arc.ok('arccat', ['-j', jobList, id]);
          arc.expect(out, /^attempt-2$/m, 'stdout of the second attempt');
        });

        it('arcresume of a failed job without reruns is refused and it stays Failed', async () => {
          const id = await submit(lang, rerunJob(lang, `norerun-${lang}`, 0), `norerun-${lang}`);
          const seen = await waitState(id, /^(Finished|Failed|Killed)$/);
          assert.equal(seen[seen.length - 1], 'Failed', `states seen: ${seen.join(' -> ')}`);
          const r = await arc.run('arcresume', ['-j', jobList, id]);
          arc.expect(r, /resumed: 0\b/, 'arcresume summary', true);
          assert.equal((await stateOf(id)).state, 'Failed');
        });
      });
    }

    it('arcsub without brokering reports the reason the CE refuses a description, and no job is made', async () => {
      // -Q NONE skips the client's matchmaking (which would drop an unknown queue itself),
      // so the description reaches Ceres and the per-job refusal comes back to the user.
      const r = await arc.run('arcsub', [
        '-d',
        'INFO',
        '-C',
        url,
        '-T',
        'arcrest',
        '-Q',
        'NONE',
        '-j',
        join(work, 'refused.dat'),
        '-e',
        '&(executable="/bin/true")(queue="no-such-queue")(jobname="refused")',
      ]);
      assert.notEqual(r.code, 0, arc.report(r, 'arcsub of a refused description succeeded'));
      arc.expect(r, /Failed to submit all jobs: \d{3} .*no-such-queue/, "the CE's reason", true);
      arc.expectNot(r, /Job submitted with jobid/, 'arcsub claims a job was submitted');
    });

    it('arcsync rebuilds a job list with every job and its delegation', async () => {
      assert.ok(submitted.length > 0, 'no job was submitted');
      const syncList = join(work, 'sync.dat');
      const r = await arc.ok('arcsync', ['-f', '-T', '-j', syncList, '-C', url]);
      for (const id of submitted) arc.expect(r, new RegExp(`^${escapeRe(id)}$`, 'm'), `arcsync lists ${id}`);
      arc.expect(r, new RegExp(`^Total number of jobs found: ${submitted.length}$`, 'm'), 'arcsync total');
      const st = await arc.ok('arcstat', ['-l', '-j', syncList, ...submitted]);
      arc.expect(
        st,
        new RegExp(`Status of ${submitted.length} jobs was queried, ${submitted.length} jobs returned information`),
        'arcstat on the synced list',
      );
      const delegations = [...st.stdout.matchAll(new RegExp(DELEGATION_LINE, 'gm'))].length;
      assert.equal(delegations, submitted.length, arc.report(st, 'every synced job names its delegation'));
    });

    it('arcclean removes every job from the CE and from the job list', async () => {
      assert.ok(submitted.length > 0, 'no job was submitted');
      const before = join(work, 'jobs-before-clean.dat');
      copyFileSync(jobList, before);
      const r = await arc.ok('arcclean', ['-j', jobList, ...submitted]);
      arc.expect(
        r,
        new RegExp(`Jobs processed: ${submitted.length}, deleted: ${submitted.length}\\b`),
        'arcclean summary',
      );
      const local = await arc.run('arcstat', ['-a', '-j', jobList]);
      arc.expect(local, /No jobs/, 'the local job list is empty', true);
      const again = await arc.ok('arcsync', ['-f', '-T', '-j', join(work, 'sync-after-clean.dat'), '-C', url]);
      arc.expect(again, /^Total number of jobs found: 0$/m, 'the CE no longer lists the cleaned jobs');
      // A stale job list still names them: the CE answers "not found" for each.
      const stale = await arc.run('arcstat', ['-j', before, ...submitted]);
      arc.expect(
        stale,
        new RegExp(`Status of ${submitted.length} jobs was queried, 0 jobs returned information`),
        'arcstat of cleaned jobs',
        true,
      );
      for (const id of submitted)
        arc.expect(stale, new RegExp(`${escapeRe(id.slice(id.lastIndexOf('/') + 1))} - 404\\b`), `404 for ${id}`, true);
    });
  });
}

/** Runs `node args` (the Ceres CLI) and requires success. */
function runNode(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`node ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
      else resolve();
    });
  });
}

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
