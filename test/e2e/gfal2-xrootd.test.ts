// root:// staging through the whole service: jobs submitted over REST to the real service
// (a child process) stage inputs from and outputs to a real xrootd server started once for
// this file (as the xrootd account, loopback clients only). The happy path, a cache hit,
// and each failure a job must end FAILED on, with a reason that names the URL without its
// secrets: a missing file, a wrong xRSL checksum= (verified before the job runs), a server
// killed while the transfer waits on it. None may hang: every wait below is bounded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { createHasher } from '../../src/staging/checksum.js';
import { XrootdServer, xrootdAvailable } from '../staging/helpers/xrootd.js';

const available = xrootdAvailable();
if (!available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('xrootd, gfal2 and root are needed here (CERES_REQUIRE_GFAL2=1)');

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

function adler32(b: Buffer): string {
  const h = createHasher('adler32');
  h.update(b);
  return h.digest();
}

describe(
  'root:// staging through the service',
  { skip: !available && 'needs root, xrootd-server and python3-gfal2' },
  () => {
    let xrd: XrootdServer;
    let ceres: RunningCeres;
    let c: Client;
    const small = randomBytes(200_000);
    const other = randomBytes(50_000);
    before(async () => {
      xrd = await XrootdServer.start();
      await xrd.put('small.bin', small);
      await xrd.put('other.bin', other);
      await xrd.put('cached.bin', Buffer.from('cached content\n'));
      ceres = await startCeres({
        config: {
          staging: {
            retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 0.2, maxAttempts: 2 },
            timeouts: { connectSeconds: 3, headersSeconds: 5, idleSeconds: 5 },
          },
        },
      });
      c = Client.forUser(ceres);
    });
    after(async () => {
      await c?.close();
      if (ceres !== undefined) {
        await stopCeres(ceres);
        removeDir(ceres.stateDir);
      }
      await xrd?.stop();
    });

    const errors = async (id: string): Promise<string> => {
      const [info] = await c.action('info', [id]);
      return JSON.stringify(info.info_document.ComputingActivity.Error ?? '');
    };
    const run = async (xrsl: string): Promise<{ id: string; state: string | undefined }> => {
      const [item] = await c.submit(xrsl);
      const st = await c.waitFor([item.id], FINAL, 120_000);
      return { id: item.id as string, state: st.get(item.id) };
    };

    it('root:// inputs (one with its adler32 given) and a root:// output: FINISHED, the server holds the output', async () => {
      const j = await run(`&(executable="/bin/sh")(arguments="-c" "cat small.bin other.bin > out.bin")
      (inputfiles=("small.bin" "${xrd.url('small.bin')}" "checksum=adler32:${adler32(small)}")("other.bin" "${xrd.url('other.bin')}"))
      (outputfiles=("out.bin" "${xrd.url('e2e/out.bin')}"))`);
      assert.equal(j.state, 'FINISHED', await errors(j.id));
      assert.deepEqual(await readFile(xrd.path('e2e/out.bin')), Buffer.concat([small, other]));
    });

    it('a second job is served from the cache (the server copy is gone by then)', async () => {
      const job = `&(executable="/bin/cat")(arguments="c.txt")(inputfiles=("c.txt" "${xrd.url('cached.bin')}"))(stdout="o")`;
      const first = await run(job);
      assert.equal(first.state, 'FINISHED', await errors(first.id));
      await rm(xrd.path('cached.bin'));
      const second = await run(job);
      assert.equal(second.state, 'FINISHED', await errors(second.id));
      assert.equal((await c.req('GET', `/rest/1.1/jobs/${second.id}/session/o`)).text, 'cached content\n');
    });

    it('a missing input fails the job naming the URL, its password left out (reason, log)', async () => {
      const url = xrd.url('nope.bin').replace('root://', 'root://alice:s3cr3tpw@');
      const j = await run(`&(executable="/bin/true")(inputfiles=("x" "${url}"))`);
      assert.equal(j.state, 'FAILED');
      const reason = await errors(j.id);
      assert.match(reason, /nope\.bin.*no such file/);
      assert.doesNotMatch(reason, /s3cr3tpw/);
      const diag = await c.req('GET', `/rest/1.1/jobs/${j.id}/diagnose/errors`);
      assert.doesNotMatch(diag.text, /s3cr3tpw/);
      assert.doesNotMatch(ceres.output(), /s3cr3tpw/);
    });

    it("a wrong xRSL checksum= fails the job before it runs, and the job's program never starts", async () => {
      const j = await run(`&(executable="/bin/sh")(arguments="-c" "echo ran > ran.txt")
      (inputfiles=("k.bin" "${xrd.url('small.bin')}" "checksum=adler32:00000001"))(outputfiles=("ran.txt" ""))`);
      assert.equal(j.state, 'FAILED');
      assert.match(await errors(j.id), /small\.bin.*checksum mismatch/);
      assert.equal((await c.req('GET', `/rest/1.1/jobs/${j.id}/session/ran.txt`)).status, 404);
    });

    it('a server killed while the transfer waits on it fails the job within bounds, naming the URL', async () => {
      // Stopped first, so the download is surely under way (connected, unanswered) when the
      // server dies; then killed: connection lost, the retry is refused.
      await xrd.put('last.bin', randomBytes(50_000)); // never fetched before: not in the cache
      process.kill(xrd.pid, 'SIGSTOP');
      const [item] = await c.submit(`&(executable="/bin/true")(inputfiles=("x" "${xrd.url('last.bin')}"))`);
      const started = Date.now();
      await c.waitFor([item.id], ['PREPARING'], 30_000);
      await xrd.kill();
      const st = await c.waitFor([item.id], FINAL, 120_000);
      const seconds = (Date.now() - started) / 1000;
      assert.equal(st.get(item.id), 'FAILED', `state ${st.get(item.id)} after ${seconds} s`);
      assert.match(await errors(item.id), /last\.bin.*(server down|timed out|helper ended)/);
      assert.ok(seconds < 90, `took ${seconds} s`);
    });
  },
);
