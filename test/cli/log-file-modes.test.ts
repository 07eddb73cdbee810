// The log file names every DN, job id and remote address: a job must never read it. Seen by
// real local accounts (what a job under them could try): the log is 0600 at every start (an
// older 0644 log is narrowed), again after every reopen for log rotation (logrotate's
// `create` makes 0644, or no file at all), folders made for it are 0700; with `log.group` it
// is 0640 and that group's, readable by a member and by nobody else. An unknown group stops
// the start (exit 2) and says why.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import {
  assertRoot,
  catAs,
  createAccount,
  createGroup,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';
import { until } from '../helpers/poll.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const mode = (p: string): number => statSync(p).mode & 0o777;

describe('serve: who may read the log file', { skip: skipUnlessRoot('reading the log as a local account') }, () => {
  let work = '';
  let job: TestAccount;
  let reader: TestAccount;
  let group: { name: string; gid: number };
  let plain: RunningCeres | undefined;
  let grouped: RunningCeres | undefined;
  let plainLog = '';
  let groupedLog = '';

  before(async () => {
    assertRoot();
    job = createAccount();
    reader = createAccount();
    group = createGroup([reader.name]);
    work = tempDir('logmodes');
    // As /var/log is: anyone may pass and list.
    chmodSync(work, 0o755);
    mkdirSync(join(work, 'log'), { mode: 0o755 });
    plainLog = join(work, 'log', 'ceres.log');
    writeFileSync(plainLog, 'a line of an older version\n', { mode: 0o644 });
    chmodSync(plainLog, 0o644);
    groupedLog = join(work, 'made', 'for', 'it', 'ceres.log');
    [plain, grouped] = await Promise.all([
      startCeres({ stateDir: join(work, 'state1'), config: { log: { level: 'info', file: plainLog } } }),
      startCeres({
        stateDir: join(work, 'state2'),
        config: { log: { level: 'info', file: groupedLog, group: group.name } },
      }),
    ]);
  });
  after(async () => {
    for (const c of [plain, grouped]) if (c) await stopCeres(c);
    removeAccounts();
    if (work) removeDir(work);
  });

  it('an older world-readable log is 0600 after the start, and a job gets "Permission denied"', () => {
    assert.equal(mode(plainLog), 0o600);
    assert.match(catAs(job, plainLog), /Permission denied/);
    assert.match(readFileSync(plainLog, 'utf8'), /older version/, 'the file itself is kept, lines appended');
  });

  it("after rotation with logrotate's create (0644), the reopened log is 0600 again", async () => {
    renameSync(plainLog, `${plainLog}.1`);
    writeFileSync(plainLog, '', { mode: 0o644 });
    chmodSync(plainLog, 0o644);
    plain?.child.kill('SIGHUP');
    await until(() => /log file reopened/.test(readFileSync(plainLog, 'utf8')), 'a line in the new log');
    assert.equal(mode(plainLog), 0o600);
    assert.match(catAs(job, plainLog), /Permission denied/);
  });

  it('after rotation without create (no file at the path), the new log is made 0600', async () => {
    renameSync(plainLog, `${plainLog}.2`);
    plain?.child.kill('SIGHUP');
    await until(() => existsSync(plainLog) && /log file reopened/.test(readFileSync(plainLog, 'utf8')), 'the new log');
    assert.equal(mode(plainLog), 0o600);
    assert.match(catAs(job, plainLog), /Permission denied/);
  });

  it("with log.group: 0640 and the group's; a member reads it, a job does not", () => {
    const s = statSync(groupedLog);
    assert.equal(s.mode & 0o777, 0o640);
    assert.equal(s.gid, group.gid);
    assert.equal(catAs(reader, groupedLog), '');
    assert.match(catAs(job, groupedLog), /Permission denied/);
  });

  it('folders made for the log are as private: 0750 and the group’s with log.group', () => {
    for (const d of ['made', 'made/for', 'made/for/it']) {
      const s = statSync(join(work, d));
      assert.equal(s.mode & 0o777, 0o750, d);
      assert.equal(s.gid, group.gid, d);
    }
  });
});

describe('serve: log.group that does not resolve', () => {
  let dir = '';
  before(() => {
    dir = tempDir('loggroup');
  });
  after(() => removeDir(dir));

  for (const [what, value] of [
    ['no such group', 'no-such-group-ceres'],
    ['a name no group can have', 'bad name:x'],
  ] as const) {
    it(`${what}: exit 2 naming the key, no log file made, nothing served`, () => {
      const config = join(dir, 'config.json');
      const file = join(dir, 'logs', 'ceres.log');
      writeFileSync(config, JSON.stringify({ log: { level: 'info', file, group: value } }));
      const r = spawnSync(
        process.execPath,
        [MAIN, 'serve', '--listen', '127.0.0.1:0', '--state-dir', join(dir, 'state'), '--config', config],
        { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' },
      );
      assert.equal(r.status, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /config key 'log\.group': no group/);
      assert.doesNotMatch(r.stdout, /service URL/);
      assert.ok(!existsSync(file));
    });
  }
});
