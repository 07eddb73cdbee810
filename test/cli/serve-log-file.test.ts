// `ceres serve` with a `log.file` it cannot open refuses to start and says why (exit 2),
// instead of serving with every log line lost; missing folders of the path are made.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, processAlive, startCeres, stopCeres } from '../helpers/service.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

describe('serve: the log file', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-logfile-'));
    writeFileSync(join(dir, 'a-file'), 'not a folder\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function serve(logFile: string): { code: number | null; stdout: string; stderr: string } {
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ log: { level: 'info', file: logFile } }));
    const r = spawnSync(
      process.execPath,
      [MAIN, 'serve', '--listen', '127.0.0.1:0', '--state-dir', join(dir, 'state'), '--config', config],
      { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' },
    );
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  for (const [what, path] of [
    ['under a regular file', (): string => join(dir, 'a-file', 'ceres.log')],
    ['that is a folder', (): string => dir],
    ['in a folder that cannot be made', (): string => '/proc/no-such-folder/ceres.log'],
  ] as const) {
    it(`a log file ${what}: exit 2 with the key, the path and the reason, nothing served`, () => {
      const r = serve(path());
      assert.equal(r.code, 2, `exit status (stdout: ${r.stdout.slice(0, 300)})`);
      assert.match(r.stderr, /config key 'log\.file': cannot open /);
      assert.ok(r.stderr.includes(path()), r.stderr);
      assert.match(r.stderr, /E(NOTDIR|ISDIR|NOENT)/);
      assert.doesNotMatch(r.stdout, /service URL/);
    });
  }

  it('a log file that cannot be reopened after rotation: the service goes on, logging to the old file, and says so', async () => {
    const logs = join(dir, 'rotated');
    const file = join(logs, 'ceres.log');
    const ceres = await startCeres({ stateDir: join(dir, 'state3'), config: { log: { level: 'info', file } } });
    const c = Client.forUser(ceres);
    try {
      assert.equal((await c.req('GET', '/rest/1.1/jobs')).status, 200);
      // Log rotation gone wrong: the folder replaced by a file, then SIGHUP to reopen.
      rmSync(logs, { recursive: true, force: true });
      writeFileSync(logs, 'not a folder\n');
      ceres.child.kill('SIGHUP');
      const deadline = Date.now() + 20_000;
      while (!/ceres: log file .*rotated\/ceres\.log: .*lines go on to the file open before/.test(ceres.output())) {
        assert.ok(Date.now() < deadline, `no report of the failed reopen: ${ceres.output().slice(-2000)}`);
        assert.ok(processAlive(ceres.child.pid ?? 0), `the service ended: ${ceres.output().slice(-2000)}`);
        await sleep(50);
      }
      await sleep(300);
      assert.ok(processAlive(ceres.child.pid ?? 0), 'still running');
      assert.equal((await c.req('GET', '/rest/1.1/jobs')).status, 200, 'still serving');
      assert.equal(readFileSync(logs, 'utf8'), 'not a folder\n');
    } finally {
      await c.close();
      assert.equal(await stopCeres(ceres), 0);
    }
  });

  it('missing folders of the path are made, and the service logs there', async () => {
    const file = join(dir, 'new', 'sub', 'ceres.log');
    const ceres = await startCeres({ stateDir: join(dir, 'state2'), config: { log: { level: 'info', file } } });
    try {
      assert.ok(existsSync(file));
    } finally {
      assert.equal(await stopCeres(ceres), 0);
    }
  });
});
