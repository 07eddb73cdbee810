// A root restore keeps owners and modes and checks each job's folders against the account
// the job runs as (real accounts): a job whose session and batch folders are its
// account's gets them back as they were, with the restored session's identity recorded;
// a set-user-ID bit is cleared; a job whose folder belongs to another account, whose
// account no longer exists or is root, or that the configuration no longer maps, is
// held: its folders given to the service and closed, a kill recorded for the start.
// Not as root, the restore says what it could not keep.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { newJobRow } from '../helpers/new-job.js';
import { removeDir, tempDir } from '../helpers/service.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';
import { MAIN, admin, ceresCli } from './cli.js';

describe(
  "ceres admin restore as root: owners kept and checked against the jobs' accounts",
  { skip: skipUnlessRoot('restoring owners') },
  () => {
    let dir: string;
    let a: TestAccount;
    let b: TestAccount;
    let file: string;
    const ids = { good: 'aa01good', foreign: 'bb02foreign', gone: 'cc03gone', root: 'dd04root', done: 'ee05done' };
    const lrmsOf = (state: string, id: string): string => join(state, 'lrms', 'jobs', id.slice(0, 2), id);

    before(() => {
      assertRoot();
      a = createAccount();
      b = createAccount();
      const c = createAccount();
      dir = tempDir('restore-owners');
      chmodSync(dir, 0o755);
      const state = join(dir, 'state');
      mkdirSync(join(state, 'sessions'), { recursive: true });
      const db = openDatabase(join(state, 'ceres.db'));
      const session = (id: string, owner: { uid: number; gid: number }): string => {
        const p = join(state, 'sessions', id);
        mkdirSync(p, { mode: 0o700 });
        chownSync(p, owner.uid, owner.gid);
        const s = lstatSync(p, { bigint: true });
        return `${s.dev}:${s.ino}`;
      };
      const rows = [
        newJobRow(ids.good, 'o', { state: 'INLRMS', localAccount: a.name, sessionIdent: session(ids.good, a) }),
        newJobRow(ids.foreign, 'o', { state: 'INLRMS', localAccount: a.name, sessionIdent: session(ids.foreign, b) }),
        newJobRow(ids.gone, 'o', { state: 'PREPARING', localAccount: c.name, sessionIdent: session(ids.gone, c) }),
        newJobRow(ids.root, 'o', { state: 'ACCEPTED', localAccount: 'root', sessionIdent: session(ids.root, a) }),
        newJobRow(ids.done, 'o', { state: 'FINISHED', localAccount: a.name, sessionIdent: session(ids.done, b) }),
      ];
      new JobStore(db).insertMany(rows);
      db.close();
      const out = join(state, 'sessions', ids.good, 'out.txt');
      writeFileSync(out, 'result\n');
      chownSync(out, a.uid, a.gid);
      chmodSync(out, 0o640);
      const prog = join(state, 'sessions', ids.good, 'prog');
      writeFileSync(prog, '#!/bin/sh\n');
      chownSync(prog, a.uid, a.gid);
      chmodSync(prog, 0o4755);
      // A Slurm attempt folder handed to the account, as the backend does.
      const attempt = join(lrmsOf(state, ids.good), 'r0');
      mkdirSync(attempt, { recursive: true, mode: 0o700 });
      chownSync(attempt, a.uid, a.gid);
      file = join(dir, 'backup.tar.gz');
      execFileSync(process.execPath, [MAIN, 'admin', '--state-dir', state, 'backup', '--with-sessions', file]);
      execFileSync('userdel', ['-r', '-f', c.name]); // its uid no longer names an account
    });
    after(() => {
      removeAccounts();
      if (dir) removeDir(dir);
    });

    const jobsIn = (state: string): Map<string, string | null> => {
      const db = new Database(join(state, 'ceres.db'), { readonly: true });
      try {
        const r = db.prepare('SELECT id, session_ident AS ident FROM jobs').all() as {
          id: string;
          ident: string | null;
        }[];
        return new Map(r.map((x) => [x.id, x.ident]));
      } finally {
        db.close();
      }
    };
    const kills = (state: string): Map<string, string> => {
      const db = new Database(join(state, 'ceres.db'), { readonly: true });
      try {
        const r = db.prepare("SELECT target, requested_by AS by FROM admin_requests WHERE action = 'kill'").all() as {
          target: string;
          by: string;
        }[];
        return new Map(r.map((x) => [x.target, x.by]));
      } finally {
        db.close();
      }
    };

    it("owners and modes are kept, set-id bits cleared, the restored session's identity recorded", async () => {
      const state = join(dir, 'restored');
      const r = await admin(state, 'restore', file);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /owners and modes kept/);
      assert.match(r.stdout, /set-user-ID\/set-group-ID bits cleared on 1 files/);
      const session = join(state, 'sessions', ids.good);
      const s = lstatSync(session, { bigint: true });
      assert.deepEqual([Number(s.uid), Number(s.mode) & 0o7777], [a.uid, 0o700]);
      const out = lstatSync(join(session, 'out.txt'));
      assert.deepEqual([out.uid, out.gid, out.mode & 0o7777], [a.uid, a.gid, 0o640]);
      const prog = lstatSync(join(session, 'prog'));
      assert.deepEqual([prog.uid, prog.mode & 0o7777], [a.uid, 0o755], 'set-user-ID cleared, owner kept');
      assert.equal(
        lstatSync(join(lrmsOf(state, ids.good), 'r0')).uid,
        a.uid,
        "the Slurm attempt folder is the account's",
      );
      assert.equal(jobsIn(state).get(ids.good), `${s.dev}:${s.ino}`, 'the identity of the restored directory');
      assert.ok(!kills(state).has(ids.good));
    });

    it("a job whose folder is another account's, whose account is gone or is root: held, closed, killed at the start", async () => {
      const state = join(dir, 'restored-held');
      const r = await admin(state, 'restore', file);
      assert.equal(r.code, 0, r.stderr);
      const k = kills(state);
      const expect: [string, RegExp][] = [
        [
          ids.foreign,
          new RegExp(`\\S+ belongs to uid ${b.uid}, not to the job's account ${a.name} \\(uid ${a.uid}\\)`),
        ],
        [ids.gone, /local account \S+ does not exist/],
        [ids.root, /local account root has uid 0: jobs never run as root/],
      ];
      for (const [id, why] of expect) {
        assert.match(
          r.stdout,
          new RegExp(`job ${id} held \\(its folders closed, killed at the start\\): ${why.source}`),
        );
        assert.match(k.get(id) ?? '', why, `the kill of ${id} says why`);
        const s = lstatSync(join(state, 'sessions', id));
        assert.deepEqual([s.uid, s.mode & 0o7777], [0, 0o700], `${id}: given to the service, closed`);
      }
      // A finished job is held (closed) but not killed: the service serves its outputs.
      assert.match(r.stdout, new RegExp(`job ${ids.done} held \\(its folders closed\\): `));
      assert.ok(!k.has(ids.done));
      assert.equal(lstatSync(join(state, 'sessions', ids.done)).uid, 0);
      assert.equal(k.size, 3);
    });

    it('with --config: a job whose account the mapping no longer names is held', async () => {
      const gridMap = join(dir, 'grid-mapfile');
      writeFileSync(gridMap, `"/O=Grid/CN=bob" ${b.name}\n`);
      const state = join(dir, 'restored-config');
      const config = join(dir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({
          stateDir: state,
          authorization: { groups: [{ name: 'g', match: [{ gridMapFile: gridMap }] }], allow: ['g'] },
          mapping: [{ group: 'g', gridMapFile: gridMap }],
        }),
      );
      const r = await ceresCli(['admin', '--config', config, 'restore', file]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(`job ${ids.good} held .*: the configuration no longer maps jobs to local account ${a.name}`),
      );
      assert.equal(lstatSync(join(state, 'sessions', ids.good)).uid, 0);
      assert.equal(lstatSync(lrmsOf(state, ids.good)).mode & 0o777, 0o700);
    });

    it("not as root: today's restore, and it says which owners it could not keep", () => {
      const state = join(dir, 'restored-nobody');
      mkdirSync(state);
      const nobody = createAccount('cernr');
      chownSync(state, nobody.uid, nobody.gid);
      chmodSync(file, 0o644);
      const r = spawnSync(
        'runuser',
        ['-u', nobody.name, '--', process.execPath, MAIN, 'admin', '--state-dir', state, 'restore', file],
        {
          encoding: 'utf8',
        },
      );
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `not kept:\\n  owners: restored as uid ${nobody.uid}, not root, so what belonged to uid [0-9, ]*${a.uid}`,
        ),
      );
      assert.match(r.stdout, /jobs under local accounts cannot write their folders \(restore as root to keep them\)/);
      assert.equal(lstatSync(join(state, 'sessions', ids.good)).uid, nobody.uid);
      assert.equal(jobsIn(state).size, 5);
    });
  },
);
