// The log lines of a file's transfer, the same for stage-in and stage-out (written once,
// src/staging/job-transfers.ts): each retry with its attempt, delay and reason; the end,
// staged (info) or failed (warn); and no failure line for a file cut short by a cancel.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import { TestServer } from './helpers/test-server.js';
import { never, recordingLogger, stagingConfig, tempDir } from './helpers/fixtures.js';
import { until } from '../helpers/poll.js';

type T = Parameters<typeof tempDir>[0];

async function setup(t: T, retry: { maxAttempts: number } = { maxAttempts: 3 }) {
  const server = await TestServer.start();
  t.after(() => server.close());
  const sessionDir = join(await tempDir(t), 'session');
  await mkdir(sessionDir);
  const logger = recordingLogger();
  const config = stagingConfig({ cache: { enabled: false }, retry: { ...retry, initialDelaySeconds: 0.01 } });
  const stager = new Stager({ config, credentials: anonymousCredentials, logger });
  const download = (name: string, path: string, signal = never) =>
    stager.stageIn(
      { id: 'j1', owner: 'o', sessionDir, files: [{ name, source: server.url(path), executable: false }] },
      signal,
    );
  const upload = async (name: string, path: string, signal = never) => {
    await writeFile(join(sessionDir, name), 'output');
    return stager.stageOut(
      {
        id: 'j1',
        owner: 'o',
        sessionDir,
        files: [{ name, target: server.url(path), when: { success: true, failure: true, cancel: true } }],
        outcome: 'success',
      },
      signal,
    );
  };
  /** The lines logged about transfers (not the credential lookups), as [level, message, fields]. */
  const lines = () =>
    logger.lines
      .filter((l) => l.level !== 'debug')
      .map((l) => [l.level, l.msg, l.obj as Record<string, unknown>] as const);
  return { server, download, upload, lines };
}

describe('transfer log lines', () => {
  for (const dir of ['download', 'upload'] as const) {
    const what = dir === 'download' ? 'input' : 'output';
    const a = dir === 'download' ? 'a download' : 'an upload';

    it(`${a} retried after a 503: one retry line with its attempt, delay and reason, then '${what} staged'`, async (t) => {
      const { server, download, upload, lines } = await setup(t);
      server.resources.set('/f', { body: Buffer.from('data') });
      server.fault('/f', { kind: 'status', status: 503, headers: { 'retry-after': '0' } });
      const r = dir === 'download' ? await download('f', '/f') : await upload('f', '/f');
      assert.equal(r.ok, true, r.failureReason);
      const logged = lines();
      assert.deepEqual(
        logged.map(([level, msg]) => [level, msg]),
        [
          ['warn', `${dir} failed; retrying`],
          ['info', `${what} staged`],
        ],
      );
      const [, , retry] = logged[0]!;
      assert.equal(retry.job, 'j1');
      assert.equal(retry.file, 'f');
      assert.equal(retry.url, server.url('/f'));
      assert.equal(retry.attempt, 1);
      assert.equal(typeof retry.delayMs, 'number');
      assert.match(String(retry.error), /503/);
      const [, , staged] = logged[1]!;
      assert.equal(staged.attempts, 2);
      assert.equal(staged.url, server.url('/f'));
      assert.equal(typeof staged.ms, 'number');
      assert.equal('fromCache' in staged, dir === 'download', 'only an input says whether it came from the cache');
    });

    it(`${a} that fails for good: its retries, then '${what} staging failed' with the code and reason`, async (t) => {
      const { server, download, upload, lines } = await setup(t, { maxAttempts: 2 });
      server.resources.set('/g', { body: Buffer.from('data') });
      server.fault('/g', { kind: 'status', status: 500 }, { kind: 'status', status: 500 });
      const r = dir === 'download' ? await download('g', '/g') : await upload('g', '/g');
      assert.equal(r.ok, false);
      const logged = lines();
      assert.deepEqual(
        logged.map(([level, msg]) => [level, msg]),
        [
          ['warn', `${dir} failed; retrying`],
          ['warn', `${what} staging failed`],
        ],
      );
      const [, , failed] = logged[1]!;
      assert.equal(failed.attempts, 2);
      assert.equal(failed.code, r.files[0]?.code);
      assert.equal(failed.error, r.failureReason);
    });

    it(`${a} cut short by a cancel logs no failure of its own`, async (t) => {
      const { server, download, upload, lines } = await setup(t);
      server.resources.set('/h', { body: Buffer.from('data') });
      server.fault('/h', { kind: 'delayHeaders', ms: 5000 });
      const ac = new AbortController();
      const running = dir === 'download' ? download('h', '/h', ac.signal) : upload('h', '/h', ac.signal);
      await until(() => server.hits.some((h) => h.path === '/h' && h.method !== 'HEAD'), 'the transfer under way');
      ac.abort(new Error('killed'));
      const r = await running;
      assert.equal(r.ok, false);
      assert.equal(r.cancelled, true);
      assert.deepEqual(lines(), [], 'no retry and no failure line for a cancelled transfer');
    });
  }
});
