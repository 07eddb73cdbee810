// What the `ceres` admin commands write is the service's alone, seen by a real local
// account (what a job under it could try): the accounting export (every user's DN and
// usage) and the backup archive (the database and the delegations' keys) cannot be read,
// and the archive is not readable at any moment while it is written, not only at the end.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import {
  assertRoot,
  catAs,
  createAccount,
  openAsItAppears,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';
import { admin, ceresCli } from './cli.js';

const mode = (p: string): number => statSync(p).mode & 0o777;

describe('admin outputs against a local account', { skip: skipUnlessRoot('reading as a local account') }, () => {
  let work = '';
  let out = '';
  let job: TestAccount;
  let ceres: RunningCeres | undefined;

  before(async () => {
    assertRoot();
    job = createAccount();
    work = tempDir('private-out');
    chmodSync(work, 0o711);
    // Where an administrator keeps exports and backups, as /var/backups: anyone may look in.
    out = join(work, 'out');
    mkdirSync(out, { mode: 0o755 });
    chmodSync(out, 0o755);
    ceres = await startCeres({ stateDir: join(work, 'state') });
    const c = Client.forUser(ceres);
    try {
      const [j] = await c.submit('&(executable="/bin/true")');
      assert.equal((await c.waitFor([j.id], ['FINISHED', 'FAILED', 'KILLED'])).get(j.id), 'FINISHED');
    } finally {
      await c.close();
    }
  });
  after(async () => {
    if (ceres) await stopCeres(ceres);
    removeAccounts();
    if (work) removeDir(work);
  });

  it('the accounting export: folders 0700, files 0600, a job gets "Permission denied"', async () => {
    const to = join(out, 'accounting');
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const r = await ceresCli([
      'accounting',
      '--state-dir',
      ceres!.stateDir,
      'export',
      '--from',
      day(Date.now() - 86_400_000),
      '--to',
      day(Date.now() + 86_400_000),
      '--out',
      to,
      '--site',
      'TEST-SITE',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const files = ['apel', 'usage-records'].flatMap((d) => readdirSync(join(to, d)).map((f) => join(to, d, f)));
    assert.ok(files.length >= 3, `summaries, sync and a usage record: ${files.join(', ')}`);
    for (const d of ['apel', 'usage-records']) assert.equal(mode(join(to, d)), 0o700, d);
    for (const f of files) {
      assert.equal(mode(f), 0o600, f);
      assert.match(catAs(job, f), /Permission denied/, f);
    }
  });

  it('the backup archive cannot be opened by a job from its first byte to its last', async () => {
    // Something large for tar and gzip to work on (sparse: no disk used), so the archive
    // is being written for a while and the account tries it while it is.
    const big = join(ceres!.stateDir, 'sessions', 'big-input');
    writeFileSync(big, '');
    truncateSync(big, 128 * 1024 * 1024);
    const file = join(out, 'backup.tar.gz');
    const said = await openAsItAppears(job, file, async () => {
      const b = await admin(ceres!.stateDir, 'backup', '--with-sessions', file);
      assert.equal(b.code, 0, b.stderr);
    });
    assert.doesNotMatch(said, /OPENED/, 'the account opened the archive while it was written');
    assert.match(said, /Permission denied/);
    assert.equal(mode(file), 0o600);
    assert.match(catAs(job, file), /Permission denied/);
  });
});
