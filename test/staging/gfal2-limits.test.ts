// Limits of gfal2 transfers: per endpoint and per protocol across jobs (the limiter
// itself, then wired into the stager against a real xrootd), bounded retries against a
// dead server, and the transfer deadline against a stalled one: each fails the input
// in seconds with a reason naming the URL, never after xrootd's default minutes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Gfal2Limits } from '../../src/staging/gfal2/limits.js';
import { Stager } from '../../src/staging/stager.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import type { StageInFile } from '../../src/staging/types.js';
import { never, sessionDirFor, stagingConfig } from './helpers/fixtures.js';
import { XrootdServer, xrootdAvailable } from './helpers/xrootd.js';

const available = xrootdAvailable();

/** Runs `n` transfers of `urls[i % urls.length]` at once, each held until released; the most seen at once per key. */
async function peaks(limits: Gfal2Limits, urls: string[], n: number): Promise<Map<string, number>> {
  const now = new Map<string, number>();
  const peak = new Map<string, number>();
  const key = (u: string): string => new URL(u).host;
  const runs = Array.from({ length: n }, (_, i) => {
    const u = urls[i % urls.length] as string;
    return limits.with(new URL(u), never, async () => {
      now.set(key(u), (now.get(key(u)) ?? 0) + 1);
      peak.set(key(u), Math.max(peak.get(key(u)) ?? 0, now.get(key(u)) ?? 0));
      peak.set(
        'all',
        Math.max(
          peak.get('all') ?? 0,
          [...now.values()].reduce((a, b) => a + b, 0),
        ),
      );
      await new Promise((r) => setImmediate(r));
      now.set(key(u), (now.get(key(u)) ?? 0) - 1);
    });
  });
  await Promise.all(runs);
  return peak;
}

describe('gfal2 transfer limits (the limiter)', () => {
  it('holds each endpoint to its limit and all of a protocol to its own', async () => {
    const limits = new Gfal2Limits(2, 3);
    const peak = await peaks(limits, ['root://a.example:1094//f', 'root://b.example:1094//f'], 20);
    assert.equal(peak.get('a.example:1094'), 2);
    assert.equal(peak.get('b.example:1094'), 2);
    assert.equal(peak.get('all'), 3, 'root:// to both endpoints shares the xrootd protocol limit');
    assert.deepEqual(limits.tracked, { hosts: 0, protocols: 0 }, 'entries go once nothing uses them');
  });

  it('counts root, xroot and roots as one protocol, and another protocol apart', async () => {
    const limits = new Gfal2Limits(10, 1);
    const peak = await peaks(limits, ['root://a:1//f', 'xroot://b:1//f', 'roots://c:1//f'], 9);
    assert.equal(peak.get('all'), 1);
    const mixed = await peaks(new Gfal2Limits(10, 1), ['root://a:1//f', 'gsiftp://b:1/f'], 8);
    assert.equal(mixed.get('all'), 2, 'xrootd and gridftp each have their own slot');
  });

  it('a transfer that fails frees its slots; one cancelled while waiting leaves the queue', async () => {
    const limits = new Gfal2Limits(1, 1);
    const url = new URL('root://a:1//f');
    await assert.rejects(
      limits.with(url, never, () => Promise.reject(new Error('boom'))),
      /boom/,
    );
    let release!: () => void;
    const holding = limits.with(url, never, () => new Promise<void>((r) => (release = r)));
    const cancel = new AbortController();
    const waiting = limits.with(url, cancel.signal, () => Promise.resolve('never ran'));
    cancel.abort(new Error('job cancelled'));
    await assert.rejects(waiting, /job cancelled/);
    release();
    await holding;
    assert.equal(await limits.with(url, never, () => Promise.resolve('ran')), 'ran');
    assert.deepEqual(limits.tracked, { hosts: 0, protocols: 0 });
  });
});

const input = (name: string, source: string): StageInFile => ({ name, source, executable: false });

describe(
  'gfal2 limits, retries and deadlines against xrootd',
  { skip: !available && 'needs root, xrootd-server and python3-gfal2' },
  () => {
    let xrd: XrootdServer;
    const files = Array.from({ length: 4 }, () => randomBytes(20_000));
    before(async () => {
      xrd = await XrootdServer.start();
      for (const [i, b] of files.entries()) await xrd.put(`f${i}.bin`, b);
    });
    after(async () => {
      await xrd?.stop();
    });
    const session = sessionDirFor;

    it('one transfer per endpoint still stages every input of a job', async (t) => {
      const sessionDir = await session(t);
      const s = new Stager({
        config: stagingConfig({ maxTransfersPerJob: 4, gfal2: { maxTransfersPerHost: 1, maxTransfersPerProtocol: 1 } }),
        credentials: anonymousCredentials,
      });
      const r = await s.stageIn(
        { id: 'l', owner: '/CN=a', sessionDir, files: files.map((_, i) => input(`f${i}`, xrd.url(`f${i}.bin`))) },
        never,
      );
      assert.equal(r.ok, true, r.failureReason);
      for (const [i, b] of files.entries()) assert.deepEqual(await readFile(join(sessionDir, `f${i}`)), b);
    });

    it('a dead server costs the bounded retries, seconds, not minutes', async (t) => {
      // A port that was free a moment ago: nothing listens there.
      const port = await new Promise<number>((resolve) => {
        const srv = createServer().listen(0, '127.0.0.1', () => {
          const p = (srv.address() as { port: number }).port;
          srv.close(() => resolve(p));
        });
      });
      const s = new Stager({
        config: stagingConfig({
          retry: { maxAttempts: 3, initialDelaySeconds: 0.1, maxDelaySeconds: 0.2 },
          timeouts: { connectSeconds: 2 },
        }),
        credentials: anonymousCredentials,
      });
      const started = Date.now();
      const r = await s.stageIn(
        {
          id: 'd',
          owner: '/CN=a',
          sessionDir: await session(t),
          files: [input('x', `root://127.0.0.1:${port}//data/x`)],
        },
        never,
      );
      const seconds = (Date.now() - started) / 1000;
      assert.equal(r.ok, false);
      assert.match(r.failureReason ?? '', new RegExp(`127\\.0\\.0\\.1:${port}//data/x.*server down or unreachable`));
      assert.equal(r.files[0]?.attempts, 3, 'retried, up to the bound');
      assert.ok(seconds < 30, `took ${seconds} s`);
    });

    it('a stalled server fails the transfer at its deadline (rate floor, overall limit), named as a timeout', async (t) => {
      const stalled = await XrootdServer.start();
      t.after(() => stalled.stop());
      await stalled.put('slow.bin', randomBytes(10_000));
      process.kill(stalled.pid, 'SIGSTOP');
      const s = new Stager({
        config: stagingConfig({
          retry: { maxAttempts: 1 },
          timeouts: { connectSeconds: 2, headersSeconds: 2, idleSeconds: 3 },
          gfal2: { transferSeconds: 4, minBytesPerSecond: 1000 },
        }),
        credentials: anonymousCredentials,
      });
      const started = Date.now();
      const r = await s.stageIn(
        { id: 's', owner: '/CN=a', sessionDir: await session(t), files: [input('slow', stalled.url('slow.bin'))] },
        never,
      );
      const seconds = (Date.now() - started) / 1000;
      assert.equal(r.ok, false);
      assert.match(r.failureReason ?? '', /slow\.bin.*(timed out|no result within)/);
      assert.ok(seconds < 45, `took ${seconds} s`);
    });
  },
);
