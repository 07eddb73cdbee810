// `ceres admin restore` judges the archive before unpacking it: a member that would reach
// out of the state directory (a link to follow, a name with "..", an absolute name, a
// hard link to a file outside), a device file or FIFO, a name a backup never has, or a
// service file of another owner refuses the whole restore with the member named, and
// nothing is unpacked. What a backup does hold (links inside a session, hard links
// within one) is restored.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/database.js';
import { removeDir, tempDir } from '../helpers/service.js';
import { admin } from './cli.js';
import { pax, writeTarGz, type Member } from './tar-writer.js';

const me = process.geteuid?.() ?? 0;

describe('ceres admin restore: the archive is checked before anything is unpacked', () => {
  const dir = tempDir('restore-archive');
  const outside = join(dir, 'outside');
  let db: Buffer;
  before(() => {
    const f = join(dir, 'made.db');
    openDatabase(f).close();
    db = readFileSync(f);
  });
  after(() => removeDir(dir));

  const base = (): Member[] => [
    {
      name: 'ceres-backup.json',
      uid: me,
      data: JSON.stringify({ format: 'ceres-backup', formatVersion: 1, included: ['ceres.db', 'sessions'] }),
    },
    { name: 'ceres.db', uid: me, data: db, mode: 0o600 },
    { name: 'sessions/', type: '5', uid: me },
    { name: 'sessions/job1/', type: '5', uid: me, mode: 0o700 },
  ];
  let n = 0;
  const restoreOf = async (members: Member[]) => {
    const file = join(dir, `a${++n}.tar.gz`);
    writeTarGz(file, members);
    const target = join(dir, `restored${n}`);
    return { r: await admin(target, 'restore', file), target };
  };
  /** Refused with `why`, and nothing was unpacked (the target is missing or empty). */
  const refused = async (members: Member[], why: RegExp): Promise<void> => {
    const { r, target } = await restoreOf([...base(), ...members]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /is refused, nothing was restored/);
    assert.match(r.stderr, why);
    assert.ok(!existsSync(target) || readdirSync(target).length === 0, 'nothing unpacked');
    assert.ok(!existsSync(outside), 'nothing created outside the state directory');
  };

  it('what a backup holds is restored: a session with a link and a hard link inside it', async () => {
    const { r, target } = await restoreOf([
      ...base(),
      { name: 'sessions/job1/data', uid: me, data: 'x' },
      { name: 'sessions/job1/also', type: '1', uid: me, link: 'sessions/job1/data' },
      { name: 'sessions/job1/etc', type: '2', uid: me, link: '/etc' },
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readlinkSync(join(target, 'sessions/job1/etc')), '/etc');
    assert.equal(lstatSync(join(target, 'sessions/job1/also')).nlink, 2);
  });

  it('the database comes back 0600 even from an archive that holds it readable by all (a backup of an earlier release)', async () => {
    // The restore opens the state directory (0711) before the service starts: a database
    // readable by all would be readable by every local account until that start.
    const members = base().map((m) => (m.name === 'ceres.db' ? { ...m, mode: 0o644 } : m));
    const { r, target } = await restoreOf(members);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(lstatSync(join(target, 'ceres.db')).mode & 0o777, 0o600);
  });

  it('a symbolic link outside a session directory is refused (the service would follow it as root)', async () => {
    await refused(
      [
        { name: 'lrms/', type: '5', uid: me },
        { name: 'lrms/jobs', type: '2', uid: me, link: outside },
      ],
      /member "lrms\/jobs" is a symbolic link outside a session directory/,
    );
  });

  it('a member below a link is refused (tar would create it through the link)', async () => {
    await refused(
      [
        { name: 'sessions/job1/l', type: '2', uid: me, link: outside },
        { name: 'sessions/job1/l/planted', uid: me, data: 'x' },
      ],
      /member "sessions\/job1\/l\/planted" lies below "sessions\/job1\/l", which is not a directory/,
    );
  });

  it('names with "..", absolute names and a pax record that renames a member are refused', async () => {
    await refused(
      [{ name: 'sessions/job1/../../../outside', uid: me, data: 'x' }],
      /has an empty, "\." or "\.\." component/,
    );
    await refused([{ name: `${outside}/x`, uid: me, data: 'x' }], /is absolute/);
    await refused(
      [pax({ path: 'sessions/../../outside' }), { name: 'sessions/job1/innocent', uid: me, data: 'x' }],
      /member "sessions\/\.\.\/\.\.\/outside" is absolute or has an empty, "\." or "\.\." component/,
    );
  });

  it("a folder of the service or a session directory that anyone may write is refused; inside a session it is the job's", async () => {
    await refused(
      [
        { name: 'lrms/', type: '5', uid: me, mode: 0o711 },
        { name: 'lrms/jobs/', type: '5', uid: me, mode: 0o777 },
      ],
      /member "lrms\/jobs" is a directory anyone may write \(mode 0777\)/,
    );
    const open = base().map((m) => (m.name === 'sessions/job1/' ? { ...m, mode: 0o1777 } : m));
    const file = join(dir, 'open-session.tar.gz');
    writeTarGz(file, open);
    const r = await admin(join(dir, 'open-session'), 'restore', file);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /member "sessions\/job1" is a directory anyone may write \(mode 1777\)/);
    const { r: ok } = await restoreOf([...base(), { name: 'sessions/job1/shared/', type: '5', uid: me, mode: 0o777 }]);
    assert.equal(ok.code, 0, ok.stderr);
  });

  it('a device file and a FIFO are refused', async () => {
    await refused(
      [{ name: 'sessions/job1/mem', type: '3', uid: me, mode: 0o666 }],
      /"sessions\/job1\/mem" is a device file/,
    );
    await refused([{ name: 'sessions/job1/pipe', type: '6', uid: me }], /"sessions\/job1\/pipe" is a FIFO/);
  });

  it('a hard link to a file outside the archive or in another session is refused', async () => {
    await refused([{ name: 'sessions/job1/pw', type: '1', uid: me, link: '/etc/passwd' }], /is absolute/);
    await refused(
      [
        { name: 'sessions/job2/', type: '5', uid: me },
        { name: 'sessions/job2/secret', uid: me, data: 'x' },
        { name: 'sessions/job1/secret', type: '1', uid: me, link: 'sessions/job2/secret' },
      ],
      /hard link to "sessions\/job2\/secret", which is not an earlier file of the same session/,
    );
  });

  it('a name a backup never has, a service file of another owner, a database that is a link: refused', async () => {
    await refused([{ name: 'etc/', type: '5', uid: me }], /"etc" is not part of a Ceres backup/);
    await refused(
      [
        { name: 'delegations/', type: '5', uid: me },
        { name: 'delegations/key', uid: me + 1, data: 'k' },
      ],
      new RegExp(`"delegations/key" belongs to uid ${me + 1}, not to the service \\(uid ${me}`),
    );
    const file = join(dir, 'dblink.tar.gz');
    writeTarGz(file, [base()[0] as Member, { name: 'ceres.db', type: '2', uid: me, link: '/etc/passwd' }]);
    const r = await admin(join(dir, 'dblink'), 'restore', file);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /member "ceres\.db" must be a regular file/);
  });

  it('what is not a gzip-compressed tar archive, or is cut short, is said so', async () => {
    writeFileSync(join(dir, 'junk.tar.gz'), 'not a tarball');
    const junk = await admin(join(dir, 'junk-target'), 'restore', join(dir, 'junk.tar.gz'));
    assert.equal(junk.code, 1);
    assert.match(junk.stderr, /cannot be restored: not a gzip-compressed tar archive/);
    const whole = join(dir, 'whole.tar.gz');
    writeTarGz(whole, [...base(), { name: 'sessions/job1/big', uid: me, data: Buffer.alloc(100_000, 1) }]);
    const { gunzipSync, gzipSync } = await import('node:zlib');
    writeFileSync(join(dir, 'cut.tar.gz'), gzipSync(gunzipSync(readFileSync(whole)).subarray(0, 60_000)));
    const cut = await admin(join(dir, 'cut-target'), 'restore', join(dir, 'cut.tar.gz'));
    assert.equal(cut.code, 1);
    assert.match(cut.stderr, /truncated/);
  });
});
