// The stage-out of a job whose session directory was never made (a job killed before the
// engine looked at it) reads an empty directory instead of making one: on the real staging
// port, real session directories and a real SQLite store, its results and control files
// equal those of a job whose directory was made and left empty, its directory stays
// unmade, and the empty directory it reads cannot be written by anyone.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { SESSION_NEVER_MADE, SESSION_NOT_MADE, SessionDirs } from '../../src/sessions/session-dirs.js';
import { sessionRecords } from '../../src/service/session-records.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import type { JobRecord } from '../../src/store/job-record.js';
import { ControlDir } from '../../src/store/control-dir.js';
import { buildConfig } from '../../src/config/load.js';
import { createStagingPort, type StagingWiring } from '../../src/engine/scheduler/staging-port.js';
import type { StageOutMode } from '../../src/engine/state-machine.js';
import { parseXrsl } from '../../src/jobdesc/xrsl/parse-xrsl.js';
import { newJobId } from '../../src/jobs/job-id.js';
import { newJobRow } from '../helpers/new-job.js';

// An output to upload (to a port nothing listens on: the file is missing before any
// connection), one kept for the client, stdout and the log directory.
const XRSL =
  '&(executable="/bin/true")(stdout="o")(gmlog="log")' +
  '(outputfiles=("up.txt" "http://127.0.0.1:9/up.txt")("kept.txt" ""))';

describe('stage-out of a session never made', () => {
  let root: string;
  let db: Db;
  let store: JobStore;
  let dirs: SessionDirs;
  let control: ControlDir;
  let port: StagingWiring;
  const sessions = () => join(root, 'sessions');

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-unmade-'));
    await mkdir(sessions());
    db = openDatabase(join(root, 'jobs.db'));
    store = new JobStore(db);
    dirs = await SessionDirs.open(sessions(), sessionRecords(store));
    control = new ControlDir(join(root, 'control'));
    port = await createStagingPort({
      config: buildConfig({ staging: { retry: { maxAttempts: 1 } } }),
      control,
      sessions: dirs,
      credentials: { credentialFor: async () => undefined },
      log: pino({ level: 'silent' }),
      cacheDir: join(root, 'cache'),
    });
  });
  after(async () => {
    await dirs.close();
    db.close();
    await rm(root, { recursive: true, force: true });
  });

  /** `uploadAlways`: outputs with a target are uploaded on every outcome (else xRSL's: on success). */
  function newJob(xrsl = XRSL, uploadAlways = true): JobRecord {
    const parsed = parseXrsl(xrsl);
    assert.ok(parsed.ok);
    // Uploaded whatever the outcome (ADL's UseIfFailure and UseIfCancel; xRSL has no such option).
    const always = { useIfSuccess: true, useIfFailure: true, useIfCancel: true };
    const description = {
      ...parsed.description,
      outputFiles: parsed.description.outputFiles.map((f) =>
        f.target === undefined || !uploadAlways ? f : { ...f, options: always },
      ),
    };
    const id = newJobId();
    store.insertMany([newJobRow(id, '/CN=alice', { description, raw: xrsl, sessionIdent: SESSION_NOT_MADE })]);
    const j = store.get(id);
    assert.ok(j);
    return j;
  }
  /** A control file with the job's id and the times taken out, to compare two jobs'. */
  async function controlText(id: string, name: string): Promise<string> {
    const b = await control.read(id, name);
    return (b?.toString('utf8') ?? '').replaceAll(id, '<id>').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/g, '<time>');
  }

  for (const mode of ['cancel', 'failure'] as StageOutMode[]) {
    it(`${mode}: the results equal those of an empty directory, and none is made`, async () => {
      const made = newJob();
      await dirs.withRoot(made.id, SESSION_NOT_MADE, async () => undefined);
      assert.ok(existsSync(join(sessions(), made.id)));
      const unmade = newJob();

      const a = await port.stageOut(made, mode, new AbortController().signal);
      const b = await port.stageOut(unmade, mode, new AbortController().signal);

      assert.equal(existsSync(join(sessions(), unmade.id)), false, 'the stage-out made the directory');
      assert.equal(store.sessionIdentOf(unmade.id), SESSION_NOT_MADE);
      assert.deepEqual(b, a);
      assert.equal(a.ok, false, 'the missing output to upload fails the stage-out');
      for (const f of ['errors', 'output_status', 'statistics'])
        assert.equal(await controlText(unmade.id, f), await controlText(made.id, f), f);
      assert.match(await controlText(unmade.id, 'errors'), /up\.txt/);
      // Removing it afterwards finds nothing and makes sure nothing is made later.
      const removed = await dirs.remove(unmade.id, SESSION_NOT_MADE);
      assert.equal(removed.found, 'none');
      assert.equal(store.sessionIdentOf(unmade.id), SESSION_NEVER_MADE);
    });
  }

  it('a record older than the store: a directory made since is the one staged out', async () => {
    const j = newJob(); // the record says not made
    await dirs.withRoot(j.id, SESSION_NOT_MADE, (d) => writeFile(join(d, 'up.txt'), 'made since'));
    assert.equal(dirs.unmadeView(j.id, SESSION_NOT_MADE), undefined);
    const r = await port.stageOut(j, 'cancel', new AbortController().signal);
    // The file was there: the failure is the upload's connection, not a missing file.
    assert.equal(r.ok, false);
    assert.doesNotMatch(await controlText(j.id, 'errors'), /not found|no such file|missing/i);
    assert.ok(existsSync(join(sessions(), j.id, 'up.txt')));
  });

  it('a removed session is not read as empty: the stage-out says it is missing', async () => {
    const j = newJob();
    await dirs.remove(j.id, SESSION_NOT_MADE);
    assert.equal(dirs.unmadeView(j.id, SESSION_NOT_MADE), undefined);
    const r = await port.stageOut(j, 'cancel', new AbortController().signal);
    assert.deepEqual(r, { ok: false, reason: `The session directory of job ${j.id} is missing` });
    assert.equal(existsSync(join(sessions(), j.id)), false);
  });

  it('a job whose record names a real directory is never given the empty view', async () => {
    const j = newJob();
    await dirs.withRoot(j.id, SESSION_NOT_MADE, async () => undefined);
    const ident = store.sessionIdentOf(j.id);
    assert.ok(ident !== undefined && ident !== null && ident !== SESSION_NOT_MADE);
    assert.equal(dirs.unmadeView(j.id, ident), undefined);
    assert.equal(dirs.unmadeView(j.id, null), undefined);
  });

  describe('nothing to stage out (the engine then records the end with the start)', () => {
    const KEPT_ONLY = '&(executable="/bin/true")(stdout="o")(gmlog="log")(outputfiles=("kept.txt" ""))';
    const nothing = (j: JobRecord, mode: StageOutMode): boolean | undefined => port.nothingToStageOut?.(j, mode);

    it('a session never made and no output to upload: nothing, on every outcome', async () => {
      const j = newJob(KEPT_ONLY);
      for (const mode of ['cancel', 'failure', 'success'] as StageOutMode[]) assert.equal(nothing(j, mode), true, mode);
      assert.equal(existsSync(join(sessions(), j.id)), false);
      // What the stage-out itself gives in that case: success, no control line.
      assert.deepEqual(await port.stageOut(j, 'cancel', new AbortController().signal), { ok: true });
      for (const f of ['errors', 'output_status', 'statistics']) assert.equal(await controlText(j.id, f), '', f);
    });

    it('an output to upload on this outcome: the stage-out runs (it fails as missing)', () => {
      const j = newJob(); // up.txt is uploaded on every outcome
      for (const mode of ['cancel', 'failure', 'success'] as StageOutMode[])
        assert.equal(nothing(j, mode), false, mode);
      // xRSL's default: uploaded on success only.
      const x = newJob('&(executable="/bin/true")(outputfiles=("up.txt" "http://127.0.0.1:9/up.txt"))', false);
      assert.equal(nothing(x, 'cancel'), true);
      assert.equal(nothing(x, 'success'), false);
    });

    it('a dynamic output list, a session made, or one removed: the stage-out runs', async () => {
      assert.equal(nothing(newJob('&(executable="/bin/true")(outputfiles=("@list" ""))'), 'cancel'), false);
      const made = newJob(KEPT_ONLY);
      await dirs.withRoot(made.id, SESSION_NOT_MADE, async () => undefined);
      assert.equal(nothing(made, 'cancel'), false, 'a record older than the store');
      const fresh = store.get(made.id);
      assert.ok(fresh);
      assert.equal(nothing(fresh, 'cancel'), false);
      const removed = newJob(KEPT_ONLY);
      await dirs.remove(removed.id, SESSION_NOT_MADE);
      assert.equal(nothing(removed, 'cancel'), false, 'the stage-out reports it missing');
    });
  });

  it('nothing can be written into the empty view, and it stays empty', async () => {
    const view = dirs.unmadeView(newJob().id, SESSION_NOT_MADE);
    assert.ok(view);
    await view(async (d) => {
      await assert.rejects(writeFile(join(d, 'planted'), 'x'), { code: 'ENOENT' });
      await assert.rejects(mkdir(join(d, 'sub')), { code: 'ENOENT' });
      assert.deepEqual(await readdir(d), []);
    });
  });

  it('without a store to ask, there is no empty view (the directory is made as before)', async () => {
    const bare = await SessionDirs.open(sessions());
    try {
      assert.equal(bare.unmadeView(newJob().id, SESSION_NOT_MADE), undefined);
    } finally {
      await bare.close();
    }
  });
});
