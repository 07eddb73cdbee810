// The job's log directory (xRSL gmlog) through the real ARC client: a failed job's
// `arcget` brings back gmlog/errors, failed, local, status and diag beside its stdout, and
// `arcls` shows the directory in the session. `arcls <job id>` itself gets A-REX's 404
// (docs/interop.md says what to type instead).
//
// Skipped only where the client is not installed and CERES_REQUIRE_INTEROP is unset.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { type ArcClient, devUserClient, interopRequired, missingArcCommands } from './arc-cli.js';

const missing = missingArcCommands();
const skip =
  missing.length > 0 && !interopRequired() ? `ARC client not installed (missing ${missing.join(', ')})` : false;

const STATE_TIMEOUT_MS = 60_000;
const FAILING =
  '&(jobname="gmlog-failed")(executable="/bin/sh")(arguments="-c" "echo out; exit 3")(stdout="out.txt")(gmlog="gmlog")';

describe('the log directory (gmlog) through the real ARC client', { skip }, () => {
  let ceres: RunningCeres | undefined;
  let work: string;
  let arc: ArcClient;
  let jobList: string;
  let id: string | undefined;

  before(async () => {
    if (missing.length > 0)
      throw new Error(`CERES_REQUIRE_INTEROP is set but the ARC client is missing (${missing.join(', ')})`);
    work = tempDir('interop-gmlog');
    ceres = await startCeres({ stateDir: join(work, 'state') });
    const c = ceres;
    jobList = join(work, 'jobs.dat');
    arc = await devUserClient(work, c);
  });

  after(async () => {
    if (ceres) await stopCeres(ceres);
    if (work) removeDir(work);
  });

  const need = (): string => {
    if (id === undefined) throw new Error('the job is missing: an earlier step failed');
    return id;
  };

  it('a job with gmlog that fails is Failed', async () => {
    const file = join(work, 'failing.xrsl');
    writeFileSync(file, FAILING);
    const r = await arc.ok('arcsub', [
      '-C',
      ceres?.url ?? '',
      '-T',
      'arcrest',
      '-Q',
      'arcrest',
      '-j',
      jobList,
      '-f',
      file,
    ]);
    const [, got = ''] = arc.expect(r, /^Job submitted with jobid: (\S+)$/m, 'arcsub printed no job id');
    id = got;
    const deadline = Date.now() + STATE_TIMEOUT_MS;
    for (;;) {
      const st = await arc.run('arcstat', ['-j', jobList, got]);
      const state = /^\s*State:\s*(\S+)/m.exec(st.stdout)?.[1];
      if (state === 'Failed') break;
      if (state === 'Finished' || state === 'Killed' || Date.now() > deadline)
        throw new Error(arc.report(st, `the job did not fail (state ${state ?? 'unknown'})`));
      await new Promise((res) => setTimeout(res, 150));
    }
  });

  it('arcls of the session shows gmlog and its files; arcls of the job id is 404, as with A-REX', async () => {
    const job = need();
    const top = await arc.ok('arcls', [`${job}/session`]);
    arc.expect(top, /^gmlog\/?$/m, 'the session lists gmlog');
    const logs = await arc.ok('arcls', [`${job}/session/gmlog`]);
    for (const f of ['errors', 'failed', 'local', 'status', 'diag']) arc.expect(logs, new RegExp(`^${f}$`, 'm'), f);
    const bare = await arc.run('arcls', [job]);
    assert.notEqual(bare.code, 0, arc.report(bare, 'arcls of the job id succeeded'));
    arc.expect(bare, /Missing job sub-resource/, "A-REX's answer", true);
  });

  it('arcget brings back gmlog/errors, failed, local, status and diag beside stdout', async () => {
    const job = need();
    const dl = join(work, 'dl');
    mkdirSync(dl);
    const r = await arc.ok('arcget', ['-D', dl, '-j', jobList, job]);
    arc.expect(r, /successfully retrieved: 1\b/, 'arcget summary');
    const dir = join(dl, job.slice(job.lastIndexOf('/') + 1));
    assert.deepEqual(readdirSync(dir).sort(), ['gmlog', 'out.txt'], arc.report(r, 'downloaded files'));
    assert.deepEqual(readdirSync(join(dir, 'gmlog')).sort(), ['diag', 'errors', 'failed', 'local', 'status']);
    const errors = readFileSync(join(dir, 'gmlog/errors'), 'utf8');
    assert.match(errors, /Job state change ACCEPTED -> PREPARING/);
    assert.match(errors, /Job state change INLRMS -> FINISHING/);
    assert.match(readFileSync(join(dir, 'gmlog/failed'), 'utf8'), /exit code.*3|3 != 0/i);
    assert.match(readFileSync(join(dir, 'gmlog/local'), 'utf8'), /^gmlog=gmlog$/m);
    assert.match(readFileSync(join(dir, 'gmlog/diag'), 'utf8'), /exitcode=3/i);
    assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'out\n');
  });
});
