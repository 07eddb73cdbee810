// Log lines gathered into batches (src/process/log-batch.ts): handed on whole and in
// order, by size or after the flush interval, never dropped, written synchronously at
// exit, and handed on before a log file is reopened.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { LineBatch, type LineSink } from '../../src/process/log-batch.js';
import { createLogger, reportLogErrors } from '../../src/process/logger.js';

class Sink implements LineSink {
  writes: string[] = [];
  events: string[] = [];
  failSync = false;
  write(data: string): boolean {
    this.writes.push(data);
    this.events.push('write');
    return true;
  }
  flushSync(): void {
    this.events.push('flushSync');
    if (this.failSync) throw new Error('sonic boom is not ready yet');
  }
  reopen(): void {
    this.events.push('reopen');
  }
}

const line = (i: number): string => `{"level":30,"msg":"line ${i}"}\n`;

async function until(f: () => boolean, what: string, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) assert.fail(`timed out: ${what}`);
    await sleep(5);
  }
}

describe('log lines in batches', () => {
  it('holds lines below the size until the interval, then hands them on in one write, in order', async () => {
    const sink = new Sink();
    const b = new LineBatch(sink, 4096, 150);
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) b.write(line(i));
    assert.equal(sink.writes.length, 0, 'nothing written before the interval');
    assert.equal(b.pending, 5);
    await until(() => sink.writes.length > 0, 'the interval flush');
    assert.ok(Date.now() - t0 >= 140, `written after the interval (${Date.now() - t0} ms)`);
    assert.deepEqual(sink.writes, [[0, 1, 2, 3, 4].map(line).join('')]);
    assert.equal(b.pending, 0);
  });

  it('hands the batch on as soon as it reaches the size, without waiting', () => {
    const sink = new Sink();
    const b = new LineBatch(sink, 100, 60_000);
    const l = line(0);
    const perBatch = Math.ceil(100 / l.length);
    for (let i = 0; i < perBatch * 3; i++) b.write(line(i));
    assert.equal(sink.writes.length, 3);
    assert.equal(sink.writes.join(''), Array.from({ length: perBatch * 3 }, (_, i) => line(i)).join(''));
    assert.equal(b.pending, 0);
  });

  it('drops nothing: every line of a long run arrives once, in order', async () => {
    const sink = new Sink();
    const b = new LineBatch(sink, 512, 20);
    const all: string[] = [];
    for (let i = 0; i < 2000; i++) {
      all.push(line(i));
      b.write(line(i));
      if (i % 97 === 0) await sleep(1);
    }
    await until(() => b.pending === 0, 'last batch');
    assert.equal(sink.writes.join(''), all.join(''));
  });

  it("pino's logger.flush(cb) gets its callback, after the lines are handed on", async () => {
    // The lines go nowhere: the callback is the point.
    const log = createLogger({ level: 'info', file: '/dev/null', bufferBytes: 4096, flushMilliseconds: 60_000 });
    let called = false;
    log.flush(() => (called = true));
    assert.ok(called, 'the callback ran');
  });

  it('a flush with nothing gathered writes nothing', () => {
    const sink = new Sink();
    const b = new LineBatch(sink, 4096, 10);
    b.flush();
    b.flush();
    assert.deepEqual(sink.writes, []);
  });

  it('at exit: the batch is handed on, then the destination written synchronously', () => {
    const sink = new Sink();
    const b = new LineBatch(sink, 4096, 60_000);
    b.write(line(1));
    b.write(line(2));
    b.flushSync();
    assert.deepEqual(sink.events, ['write', 'flushSync']);
    assert.deepEqual(sink.writes, [line(1) + line(2)]);
  });

  it('at exit, a destination that cannot be written synchronously yet does not throw', () => {
    const sink = new Sink();
    sink.failSync = true;
    const b = new LineBatch(sink, 4096, 60_000);
    b.write(line(1));
    assert.doesNotThrow(() => b.flushSync());
    assert.deepEqual(sink.writes, [line(1)]);
  });

  it('before a log file is reopened, the lines gathered go to the old destination', () => {
    const sink = new Sink();
    const b = new LineBatch(sink, 4096, 60_000);
    b.write(line(1));
    b.reopen();
    assert.deepEqual(sink.events, ['write', 'reopen']);
  });

  it('its timer does not keep the process alive', async () => {
    const src = new URL('../../src/process/log-batch.js', import.meta.url).href;
    const code = `import(${JSON.stringify(src)}).then(({ LineBatch }) => {
      const b = new LineBatch({ write() { return true; }, flushSync() {} }, 4096, 60000);
      b.write('x\\n');
    });`;
    const t0 = Date.now();
    const r = spawnSync(process.execPath, ['-e', code], { timeout: 30_000 });
    assert.equal(r.status, 0, String(r.stderr));
    assert.ok(Date.now() - t0 < 30_000, 'the process ended before the 60 s flush');
  });
});

describe('the service logger with batches', () => {
  it('writes the lines gathered when the process exits without a flush (a crash, process.exit)', async () => {
    const src = new URL('../../src/process/logger.js', import.meta.url).href;
    const code = `import(${JSON.stringify(src)}).then(({ createLogger }) => {
      const log = createLogger({ level: 'info', bufferBytes: 4096, flushMilliseconds: 60000 });
      log.info({ n: 1 }, 'first');
      log.info({ n: 2 }, 'second');
      setTimeout(() => { throw new Error('crash'); }, 50);
    });`;
    const r = spawnSync(process.execPath, ['-e', code], { timeout: 30_000, encoding: 'utf8' });
    assert.notEqual(r.status, 0, 'the process crashed');
    const msgs = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
    assert.deepEqual(msgs, ['first', 'second']);
  });

  it('with bufferBytes 0 each line is written at once', async () => {
    const src = new URL('../../src/process/logger.js', import.meta.url).href;
    // Killed before any timer could write: only a line written at once is there.
    const code = `import(${JSON.stringify(src)}).then(({ createLogger }) => {
      const log = createLogger({ level: 'info', bufferBytes: 0 });
      log.info('at once');
      setTimeout(() => process.kill(process.pid, 'SIGKILL'), 1000);
    });`;
    const r = spawnSync(process.execPath, ['-e', code], { timeout: 30_000, encoding: 'utf8' });
    assert.equal(r.signal, 'SIGKILL');
    assert.match(r.stdout, /"msg":"at once"/, 'written before the kill');
  });
});

describe('failed log writes', () => {
  it('are reported on standard error at most once per 10 s, with the count of those in between', async () => {
    const dest = new EventEmitter();
    let t = 1_000_000;
    const lines: string[] = [];
    reportLogErrors(
      dest,
      '/var/log/ceres/ceres.log',
      () => t,
      (l) => lines.push(l),
    );
    dest.emit('error', new Error('ENOSPC: no space left on device, write'));
    t += 1000;
    dest.emit('error', new Error('ENOSPC: no space left on device, write'));
    dest.emit('error', new Error('ENOSPC: no space left on device, write'));
    assert.equal(lines.length, 1);
    t += 10_000;
    dest.emit('error', new Error('EEXIST: file already exists, mkdir'));
    assert.deepEqual(lines, [
      'ceres: log file /var/log/ceres/ceres.log: ENOSPC: no space left on device, write; lines go on to the file open before\n',
      'ceres: log file /var/log/ceres/ceres.log: EEXIST: file already exists, mkdir (and 2 more since the last report); lines go on to the file open before\n',
    ]);
  });

  it('on standard output, without the words about a file', async () => {
    const dest = new EventEmitter();
    const lines: string[] = [];
    reportLogErrors(
      dest,
      undefined,
      () => 0,
      (l) => lines.push(l),
    );
    dest.emit('error', new Error('EPIPE'));
    assert.deepEqual(lines, ['ceres: log on standard output: EPIPE\n']);
  });
});
