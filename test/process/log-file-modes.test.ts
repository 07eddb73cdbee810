// The log file's mode and group as the logger sets them (src/process/logger.ts), on real
// files: 0600 without log.group, also for a log an older version left 0644, folders made
// for it 0700; with a group (as root) 0640 and the group's; a device at the log path is
// never changed; a path that cannot be secured at a reopen is reported, not thrown.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { createLogger, reopenLogFile, secureLogFile } from '../../src/process/logger.js';
import { isRoot } from '../helpers/local-accounts.js';

const mode = (p: string): number => statSync(p).mode & 0o777;

/** Waits until the logger's destination has opened its file (before the folder is removed). */
async function opened(log: Logger): Promise<void> {
  const dest = (log as unknown as Record<symbol, { fd: number; once(e: 'ready', f: () => void): void }>)[
    pino.symbols.streamSym
  ];
  if (dest !== undefined && dest.fd < 0) await new Promise<void>((r) => dest.once('ready', r));
}

describe('the log file is private to the service', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-logmode-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a new log in folders the logger makes: the folders 0700, the file 0600', async () => {
    const file = join(dir, 'new', 'sub', 'ceres.log');
    await opened(createLogger({ level: 'info', file, bufferBytes: 0 }));
    assert.equal(mode(join(dir, 'new')), 0o700);
    assert.equal(mode(join(dir, 'new', 'sub')), 0o700);
    assert.equal(mode(file), 0o600);
  });

  it('an older log left 0644 is 0600 once the logger opened it, its lines kept', async () => {
    const file = join(dir, 'old.log');
    writeFileSync(file, 'older line\n');
    chmodSync(file, 0o644);
    await opened(createLogger({ level: 'info', file, bufferBytes: 0 }));
    assert.equal(mode(file), 0o600);
    assert.equal(statSync(file).size, 'older line\n'.length);
  });

  it('a reopen whose path cannot be secured reports it and does not throw', () => {
    const file = join(dir, 'gone', 'ceres.log');
    const lines: string[] = [];
    let reopened = 0;
    const stream = { write: () => undefined, reopen: () => void reopened++ };
    reopenLogFile(pino({ level: 'info' }, stream), file, {}, (l) => lines.push(l));
    assert.equal(reopened, 1, 'the reopen runs all the same (and reports its own failure)');
    assert.equal(lines.length, 1);
    assert.match(lines[0] ?? '', /log file .*gone\/ceres\.log: cannot set its mode and group: ENOENT/);
  });

  it('as root, with a group: 0640 and the group’s', { skip: !isRoot && 'chown to a group needs root' }, () => {
    const file = join(dir, 'grouped.log');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    secureLogFile(file, { gid: 4242 });
    assert.equal(mode(file), 0o640);
    assert.equal(statSync(file).gid, 4242);
  });

  it('a device at the log path keeps its mode', { skip: !isRoot && 'mknod needs root' }, () => {
    // A private copy of /dev/null (char 1,3): the real one is never put at risk.
    const dev = join(dir, 'null');
    execFileSync('mknod', ['-m', '666', dev, 'c', '1', '3']);
    secureLogFile(dev, {});
    secureLogFile(dev, { gid: 4242 });
    assert.equal(mode(dev), 0o666);
    assert.equal(statSync(dev).gid, 0);
  });
});
