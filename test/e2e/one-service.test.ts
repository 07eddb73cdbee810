// One service per state directory, and no engine before the listener: a second
// `ceres serve` on a state directory in use, or a `ceres serve` whose port is taken,
// exits non-zero with a clear message and runs no job; two racing starts leave exactly
// one service; a service killed with -9 leaves no lock behind.
// Jobs append their id to a ledger file when they start, so "no job ran" is observable.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Client,
  jobWritableFile,
  tempDir,
  removeDir,
  type RunningCeres,
  startCeres,
  stopCeres,
} from '../helpers/service.js';
import { lockStateDir, StateDirBusyError } from '../../src/process/state-lock.js';
import { StartError } from '../../src/process/start-error.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

interface Serve {
  readonly child: ChildProcess;
  output(): string;
  /** Exited, and its output read to the end. */
  ended(): boolean;
  /** Exit code (once its output is read to the end), or 'running' if still alive after `ms`. */
  exit(ms: number): Promise<number | 'running'>;
}

/** `ceres serve` with its configuration outside the state directory. */
function serve(stateDir: string, listen: string, configFile: string): Serve {
  const child = spawn(
    process.execPath,
    [MAIN, 'serve', '--listen', listen, '--state-dir', stateDir, '--config', configFile],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  // 'close', not 'exit': a process can exit before its last output is read from the pipes (seen
  // under load: the loser's message was not yet in `out` when its exit code was).
  let ended = false;
  const exited = new Promise<number>((r) =>
    child.once('close', (code) => {
      ended = true;
      r(code ?? 128);
    }),
  );
  return {
    child,
    output: () => out,
    ended: () => ended,
    exit: (ms) => Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), ms).unref())]),
  };
}

async function waitUntil(what: string, cond: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function ledgerLines(ledger: string): string[] {
  return existsSync(ledger)
    ? readFileSync(ledger, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

describe('one service per state directory; no engine before the listener', () => {
  let dir: string;
  let stateDir: string;
  let ledger: string;
  let config: string;
  let first: RunningCeres;
  let waiting: string;

  before(async () => {
    dir = tempDir('one-service');
    stateDir = join(dir, 'state');
    ledger = jobWritableFile(join(dir, 'ledger'));
    const script = join(dir, 'job.sh');
    writeFileSync(script, `#!/bin/sh\necho "$RUNTIME_JOB_ID" >> ${ledger}\nsleep "$1"\n`);
    chmodSync(script, 0o755);
    config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ log: { level: 'warn' } }));
    // The first service runs one job at a time: the second one waits (PREPARED) for
    // whichever engine gets at the database next.
    first = await startCeres({ stateDir, config: { engine: { maxRunningJobs: 1 } } });
    const c = Client.forUser(first);
    const [running] = await c.submit(`&(executable="${script}")(arguments="30")`);
    await waitUntil('the first job to start', () => ledgerLines(ledger).includes(running.id));
    [{ id: waiting }] = await c.submit(`&(executable="${script}")(arguments="0")`);
    assert.equal((await c.waitFor([waiting], ['PREPARED'])).get(waiting), 'PREPARED');
    await c.close();
  });

  after(async () => {
    if (first.child.exitCode === null) await stopCeres(first, 'SIGKILL');
    removeDir(dir);
  });

  it('a second serve on the same state directory exits 1 naming the running one, and touches no job', async () => {
    const second = serve(stateDir, '127.0.0.1:0', config);
    const code = await second.exit(60_000);
    if (code === 'running') second.child.kill('SIGKILL');
    assert.equal(code, 1, second.output());
    assert.match(
      second.output(),
      new RegExp(`ceres: the state directory .* is in use by another ceres serve \\(pid ${first.child.pid}\\)`),
    );
    assert.doesNotMatch(second.output(), /service URL/);
    // The first service is unaffected, and the waiting job is still waiting.
    const c = Client.forUser(first);
    assert.equal((await c.status([waiting])).get(waiting), 'PREPARED');
    await c.close();
    assert.ok(!ledgerLines(ledger).includes(waiting));
  });

  it('with a log file, the refused start prints its one line and nothing more', async () => {
    // docs/operations.md, "Start order and failures": one line saying why. The log file was
    // still being opened when the start gave up, and the logger's flush at exit printed
    // a second line, `ceres: sonic boom is not ready yet`.
    const withFile = join(dir, 'config-log-file.json');
    writeFileSync(withFile, JSON.stringify({ log: { level: 'warn', file: join(dir, 'log', 'ceres.log') } }));
    const second = serve(stateDir, '127.0.0.1:0', withFile);
    const code = await second.exit(60_000);
    if (code === 'running') second.child.kill('SIGKILL');
    assert.equal(code, 1, second.output());
    const lines = second.output().trim().split('\n');
    assert.equal(lines.length, 1, second.output());
    assert.match(lines[0] as string, /ceres: the state directory .* is in use by another ceres serve/);
  });

  it('a serve whose port is taken exits 1 with the reason, and its engine never ran', async () => {
    assert.equal(await stopCeres(first), 0);
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const s = serve(stateDir, `127.0.0.1:${port}`, config);
      const code = await s.exit(60_000);
      if (code === 'running') s.child.kill('SIGKILL');
      assert.equal(code, 1, s.output());
      assert.match(
        s.output(),
        new RegExp(`ceres: cannot listen on 127\\.0\\.0\\.1:${port}: the address is already in use`),
      );
      // An engine would have started the waiting job at once (default limits).
      await new Promise((r) => setTimeout(r, 1000));
      assert.ok(!ledgerLines(ledger).includes(waiting), 'the waiting job was started');
    } finally {
      blocker.close();
    }
  });

  it('a restart after kill -9 is not blocked by the dead service, and its engine runs jobs', async () => {
    const killed = await startCeres({ stateDir, config: { engine: { maxRunningJobs: 1 } } });
    assert.equal(await stopCeres(killed, 'SIGKILL'), null);
    const again = await startCeres({ stateDir });
    try {
      const c = Client.forUser(again);
      const [job] = await c.submit(`&(executable="${join(dir, 'job.sh')}")(arguments="0")`);
      const st = await c.waitFor([job.id], ['FINISHED', 'FAILED'], 60_000);
      assert.equal(st.get(job.id), 'FINISHED');
      assert.ok(ledgerLines(ledger).includes(job.id));
      await c.close();
    } finally {
      await stopCeres(again);
    }
  });

  it('of two serves started at once on a fresh state directory exactly one runs', async () => {
    const fresh = join(dir, 'fresh');
    const a = serve(fresh, '127.0.0.1:0', config);
    const b = serve(fresh, '127.0.0.1:0', config);
    try {
      await waitUntil(
        'one to start and one to exit',
        () => (/service URL/.test(a.output()) || /service URL/.test(b.output())) && (a.ended() || b.ended()),
        90_000,
      );
      const [winner, loser] = /service URL/.test(a.output()) ? [a, b] : [b, a];
      assert.equal(loser.child.exitCode, 1, loser.output());
      assert.match(loser.output(), /is in use by another ceres serve/);
      assert.equal(winner.child.exitCode, null);
    } finally {
      for (const s of [a, b]) if (s.child.exitCode === null) s.child.kill('SIGTERM');
      await Promise.all([a.exit(30_000), b.exit(30_000)]);
    }
  });
});

describe('state directory lock (in process)', () => {
  it('refuses a second holder in the same process until released', () => {
    const d = tempDir('lock');
    try {
      const l = lockStateDir(d);
      assert.throws(
        () => lockStateDir(d),
        (e: unknown) =>
          e instanceof StateDirBusyError &&
          e.holderPid === process.pid &&
          /in use by another ceres serve \(pid \d+\)/.test(e.message),
      );
      l.release();
      lockStateDir(d).release();
      // Nothing but the lock file itself is left behind (no journal).
      assert.ok(!existsSync(join(d, 'ceres.lock-journal')));
    } finally {
      removeDir(d);
    }
  });

  it('a lock file that cannot be opened is a start error naming it, not a crash', () => {
    const d = tempDir('lock');
    try {
      mkdirSync(join(d, 'ceres.lock'));
      assert.throws(
        () => lockStateDir(d),
        (e: unknown) =>
          e instanceof StartError &&
          !(e instanceof StateDirBusyError) &&
          e.message.startsWith(`cannot lock the state directory ${d}: `),
      );
    } finally {
      removeDir(d);
    }
  });

  it('an unusable lock file: serve exits 1 with one line, no stack', async () => {
    const d = tempDir('lock');
    try {
      const config = join(d, 'config.json');
      writeFileSync(config, JSON.stringify({ log: { level: 'warn' } }));
      mkdirSync(join(d, 'state'));
      mkdirSync(join(d, 'state', 'ceres.lock'));
      const s = serve(join(d, 'state'), '127.0.0.1:0', config);
      const code = await s.exit(60_000);
      if (code === 'running') s.child.kill('SIGKILL');
      assert.equal(code, 1, s.output());
      assert.match(s.output(), /^ceres: cannot lock the state directory .*$/m);
      assert.doesNotMatch(s.output(), /\n\s+at /);
    } finally {
      removeDir(d);
    }
  });
});
