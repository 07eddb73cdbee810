// Session directories made on a job's first use (src/sessions/session-dirs.ts), on real
// files and a real SQLite job store: one directory however many first uses race, its
// identity stored before it is used, nothing made after a removal, and whatever a job
// or a crash left at the job's name before the directory was made either adopted (a
// crash's empty leftover) or refused and left alone.
import { describe, it, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SESSION_NEVER_MADE,
  SESSION_NOT_MADE,
  SessionDirs,
  identityOf,
  type SessionRecords,
} from '../../src/sessions/session-dirs.js';
import { sessionRecords } from '../../src/service/session-records.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { newJobId } from '../../src/jobs/job-id.js';
import { newJobRow } from '../helpers/new-job.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { assertRoot, isRoot, rootRequired, skipUnlessRoot } from '../helpers/local-accounts.js';

const code = (c: string) => (e: unknown) => isCeError(e) && e.code === c;

describe('session directories made on first use', () => {
  let root: string;
  let folder: string;
  let outside: string;
  let db: Db;
  let store: JobStore;
  let dirs: SessionDirs;
  /** Owner given to the next jobs' directories (the mapped account's, as root). */
  let owner: { uid: number; gid: number } | undefined;
  /** What the next first use runs right after its mkdir (the fault-injection hook). */
  let afterMake: ((id: string) => Promise<void>) | undefined;

  const records = (): SessionRecords => sessionRecords(store, async () => owner);
  const newJob = (account: string | null = null): string => {
    const id = newJobId();
    store.insertMany([newJobRow(id, '/CN=alice', { localAccount: account, sessionIdent: SESSION_NOT_MADE })]);
    return id;
  };
  const at = (id: string) => join(folder, id);

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-firstuse-'));
    db = openDatabase(join(root, 'jobs.db'));
    store = new JobStore(db);
  });
  beforeEach(async () => {
    await dirs?.close();
    owner = undefined;
    afterMake = undefined;
    await rm(join(root, 'f'), { recursive: true, force: true });
    await rm(join(root, 'outside'), { recursive: true, force: true });
    folder = join(root, 'f');
    outside = join(root, 'outside');
    await mkdir(folder);
    await mkdir(outside);
    await writeFile(join(outside, 'precious'), 'keep me');
    dirs = await SessionDirs.open(folder, records(), { afterMake: (id) => afterMake?.(id) ?? Promise.resolve() });
  });
  after(async () => {
    await dirs.close();
    db.close();
    await rm(root, { recursive: true, force: true });
  });

  it('the first use makes the directory and stores its identity; a stale record finds the same one', async () => {
    const id = newJob();
    assert.ok(!existsSync(at(id)));
    await dirs.withRoot(id, SESSION_NOT_MADE, (d) => writeFile(join(d, 'in.txt'), 'input'));
    const ident = identityOf(lstatSync(at(id), { bigint: true }));
    assert.equal(store.sessionIdentOf(id), ident);
    assert.equal(lstatSync(at(id)).mode & 0o777, 0o700);
    // A caller still holding the record read at submission gets the directory made above.
    const read = await dirs.withRoot(id, SESSION_NOT_MADE, async (d) => readFileSync(join(d, 'in.txt'), 'utf8'));
    assert.equal(read, 'input');
    await dirs.check(id, ident);
  });

  it('first uses that race make one directory, and all of them use it', async () => {
    const id = newJob();
    const seen = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        dirs.withRoot(id, SESSION_NOT_MADE, async (d) => {
          await writeFile(join(d, `f${i}`), String(i));
          return identityOf(lstatSync(d, { bigint: true }));
        }),
      ),
    );
    assert.equal(new Set(seen).size, 1);
    assert.equal(store.sessionIdentOf(id), seen[0]);
    assert.equal(readdirSync(at(id)).length, 20);
  });

  it('a link put at the job name before the first use is refused, and neither it nor its target is touched', async () => {
    const id = newJob();
    await symlink(outside, at(id));
    await assert.rejects(
      dirs.withRoot(id, SESSION_NOT_MADE, async (d) => writeFile(join(d, 'x'), 'x')),
      code('CE_ERR_SESSION_REPLACED'),
    );
    assert.ok(lstatSync(at(id)).isSymbolicLink());
    assert.deepEqual(readdirSync(outside), ['precious']);
    assert.equal(store.sessionIdentOf(id), SESSION_NOT_MADE, 'no identity stored for what was refused');
  });

  it('a file at the job name is refused and left', async () => {
    const id = newJob();
    await writeFile(at(id), 'squatter');
    await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
    assert.equal(readFileSync(at(id), 'utf8'), 'squatter');
  });

  it('a directory with content at the job name (another job moved there) is refused and left as it is', async () => {
    const id = newJob();
    await mkdir(at(id), { mode: 0o700 });
    await writeFile(join(at(id), 'other-job-data'), 'theirs');
    await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
    assert.deepEqual(readdirSync(at(id)), ['other-job-data']);
    assert.equal(store.sessionIdentOf(id), SESSION_NOT_MADE);
  });

  it("an empty directory of the job's owner (a kill -9 between the mkdir and the stored identity) is adopted", async () => {
    const id = newJob();
    await mkdir(at(id), { mode: 0o700 });
    const ident = identityOf(lstatSync(at(id), { bigint: true }));
    await dirs.check(id, SESSION_NOT_MADE);
    assert.equal(store.sessionIdentOf(id), ident);
  });

  it('removing a session never made stores that it never will be: later uses find nothing and make nothing', async () => {
    const id = newJob();
    const r = await dirs.remove(id, SESSION_NOT_MADE);
    assert.equal(r.found, 'none');
    assert.equal(store.sessionIdentOf(id), SESSION_NEVER_MADE);
    await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
    await assert.rejects(
      dirs.withRoot(id, SESSION_NEVER_MADE, async () => undefined),
      code('CE_ERR_SESSION_NOT_FOUND'),
    );
    assert.ok(!existsSync(at(id)));
  });

  it('a removal that starts while the directory is being made waits for it and removes what was made', async () => {
    const id = newJob();
    // openRoot starts the making before its first await: the removal finds it in flight.
    const opening = dirs.openRoot(id, SESSION_NOT_MADE);
    const removal = dirs.remove(id, SESSION_NOT_MADE);
    await (await opening).close();
    assert.equal((await removal).found, 'own');
    assert.ok(!existsSync(at(id)));
    await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
    assert.ok(!existsSync(at(id)), 'not made again');
  });

  it('a use and a removal in either order: the use ran first or finds nothing, and nothing is left', async () => {
    const id = newJob();
    const [u, r] = await Promise.allSettled([
      dirs.withRoot(id, SESSION_NOT_MADE, (d) => writeFile(join(d, 'a'), 'a')),
      dirs.remove(id, SESSION_NOT_MADE),
    ]);
    assert.equal(r.status, 'fulfilled');
    if (u.status === 'rejected') assert.ok(code('CE_ERR_SESSION_NOT_FOUND')(u.reason), String(u.reason));
    assert.ok(!existsSync(at(id)));
  });

  describe('a removal that began before the making takes the directory away right after its mkdir', () => {
    // The removal runs in the window itself, through a second SessionDirs on the same folder
    // and store: like a removal in this process that looked for a making before the use
    // registered one, it does not wait for the making. It stores SESSION_NEVER_MADE and
    // removes the empty directory it finds, the interleaving the race above hits at random.
    let other: SessionDirs;
    beforeEach(async () => {
      other = await SessionDirs.open(folder, records());
    });
    afterEach(async () => {
      await other.close();
    });
    const removedThere = (found: string) => async (id: string) => {
      assert.equal((await other.remove(id, SESSION_NOT_MADE)).found, found);
    };

    it('the use finds nothing (404), never a raw ENOENT, and nothing is left or stored', async () => {
      const id = newJob();
      afterMake = removedThere('own');
      await assert.rejects(
        dirs.withRoot(id, SESSION_NOT_MADE, (d) => writeFile(join(d, 'a'), 'a')),
        code('CE_ERR_SESSION_NOT_FOUND'),
      );
      assert.ok(!existsSync(at(id)));
      assert.equal(store.sessionIdentOf(id), SESSION_NEVER_MADE);
      afterMake = undefined;
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
      assert.ok(!existsSync(at(id)), 'not made again');
    });

    it("a crash's empty leftover taken away before it is adopted: not found as well", async () => {
      const id = newJob();
      await mkdir(at(id), { mode: 0o700 });
      afterMake = removedThere('own');
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
      assert.ok(!existsSync(at(id)));
      assert.equal(store.sessionIdentOf(id), SESSION_NEVER_MADE);
    });

    it('a link put in its place in that window is refused (409) and its target left alone', async () => {
      const id = newJob();
      afterMake = async (made) => {
        await rm(at(made), { recursive: true });
        await symlink(outside, at(made));
      };
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
      assert.deepEqual(readdirSync(outside), ['precious']);
      assert.equal(store.sessionIdentOf(id), SESSION_NOT_MADE, 'no identity stored for what was refused');
    });

    it('a file put in its place in that window is refused (409) and left', async () => {
      const id = newJob();
      afterMake = async (made) => {
        await rm(at(made), { recursive: true });
        await writeFile(at(made), 'squatter');
      };
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
      assert.equal(readFileSync(at(id), 'utf8'), 'squatter');
    });
  });

  it('removing a session never made: a link in its place is unlinked (not followed), a directory with content kept', async () => {
    const linked = newJob();
    await symlink(outside, at(linked));
    assert.equal((await dirs.remove(linked, SESSION_NOT_MADE)).found, 'link');
    assert.ok(!existsSync(at(linked)));
    assert.deepEqual(readdirSync(outside), ['precious']);

    const squatted = newJob();
    await mkdir(at(squatted));
    await writeFile(join(at(squatted), 'theirs'), 'x');
    const r = await dirs.remove(squatted, SESSION_NOT_MADE);
    assert.equal(r.keptForeign, true);
    assert.deepEqual(readdirSync(at(squatted)), ['theirs']);

    const leftover = newJob();
    await mkdir(at(leftover));
    assert.equal((await dirs.remove(leftover, SESSION_NOT_MADE)).found, 'own');
    assert.ok(!existsSync(at(leftover)));
  });

  it('a session made after all, then removed with the record read before, goes by its identity', async () => {
    const id = newJob();
    await dirs.withRoot(id, SESSION_NOT_MADE, (d) => writeFile(join(d, 'a'), 'a'));
    const r = await dirs.remove(id, SESSION_NOT_MADE);
    assert.equal(r.found, 'own');
    assert.ok(!existsSync(at(id)));
  });

  it('a job gone from the store gets no directory', async () => {
    await assert.rejects(dirs.check(newJobId(), SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
    assert.deepEqual(readdirSync(folder), []);
  });

  it('without the store to record identities, a session not made is not found and nothing is made', async () => {
    const id = newJob();
    const bare = await SessionDirs.open(folder);
    try {
      await assert.rejects(bare.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
    } finally {
      await bare.close();
    }
    assert.ok(!existsSync(at(id)));
  });

  describe('with a mapped account (as root)', { skip: skipUnlessRoot('chown of session directories') }, () => {
    before(() => {
      if (rootRequired()) assertRoot();
    });

    it("the directory is made as the account's", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      await dirs.check(id, SESSION_NOT_MADE);
      const s = lstatSync(at(id));
      assert.equal(s.uid, 45_678);
      assert.equal(s.gid, 45_679);
    });

    it("an empty directory of another account at the job's name is refused and left", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      await mkdir(at(id));
      await chown(at(id), 45_000, 45_000);
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
      assert.equal(lstatSync(at(id)).uid, 45_000);
      assert.equal(store.sessionIdentOf(id), SESSION_NOT_MADE);
    });

    // What a kill -9 leaves while a mapped job's directory is made: the mkdir done, the
    // lchown not (the service's own empty directory), or the lchown done and the identity
    // not stored (the account's empty directory). Both are finished, never failed.
    it("the service's own empty directory (killed between the mkdir and the lchown) is adopted and given to the account", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      await mkdir(at(id), { mode: 0o700 });
      const ident = identityOf(lstatSync(at(id), { bigint: true }));
      await dirs.check(id, SESSION_NOT_MADE);
      assert.equal(store.sessionIdentOf(id), ident);
      const s = lstatSync(at(id));
      assert.deepEqual([s.uid, s.gid, s.mode & 0o777], [45_678, 45_679, 0o700]);
    });

    it("the account's empty directory (killed between the lchown and the stored identity) is adopted", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      await mkdir(at(id), { mode: 0o700 });
      await chown(at(id), 45_678, 45_679);
      await dirs.check(id, SESSION_NOT_MADE);
      assert.equal(store.sessionIdentOf(id), identityOf(lstatSync(at(id), { bigint: true })));
      assert.equal(lstatSync(at(id)).uid, 45_678);
    });

    it("a directory of the service's with content at the job's name is refused, left, and not given away", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      await mkdir(at(id), { mode: 0o700 });
      await writeFile(join(at(id), 'service-file'), 'not the job’s');
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
      assert.equal(lstatSync(at(id)).uid, 0);
      assert.equal(lstatSync(join(at(id), 'service-file')).uid, 0);
      assert.equal(store.sessionIdentOf(id), SESSION_NOT_MADE);
    });

    it("a directory of the account's with content at the job's name is refused and left (the service puts nothing in before the identity is stored)", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      await mkdir(at(id), { mode: 0o700 });
      await writeFile(join(at(id), 'planted'), 'x');
      await chown(at(id), 45_678, 45_679);
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
      assert.deepEqual(readdirSync(at(id)), ['planted']);
      assert.equal(store.sessionIdentOf(id), SESSION_NOT_MADE);
    });

    it("a link to an empty directory of the service's at the job's name is refused, and its target not given away", async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      const target = join(outside, 'empty');
      await mkdir(target, { mode: 0o700 });
      await symlink(target, at(id));
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_REPLACED'));
      assert.equal(lstatSync(target).uid, 0);
      assert.ok(lstatSync(at(id)).isSymbolicLink());
    });

    it('taken away right after its mkdir, before it is given to the account: not found, never a raw ENOENT', async () => {
      owner = { uid: 45_678, gid: 45_679 };
      const id = newJob('mapped');
      afterMake = async (made) => {
        await rm(at(made), { recursive: true });
        store.swapSessionIdent(made, SESSION_NOT_MADE, SESSION_NEVER_MADE);
      };
      await assert.rejects(dirs.check(id, SESSION_NOT_MADE), code('CE_ERR_SESSION_NOT_FOUND'));
      assert.ok(!existsSync(at(id)));
    });

    it('an account that does not resolve leaves the directory the service’s', async () => {
      owner = undefined;
      const id = newJob('nosuchaccount');
      await dirs.check(id, SESSION_NOT_MADE);
      assert.equal(lstatSync(at(id)).uid, isRoot ? 0 : process.geteuid?.());
    });
  });
});
