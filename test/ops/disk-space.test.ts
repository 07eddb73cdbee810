// Disk low-water marks on a real small file system: the session directories on an 8 MiB
// tmpfs. Filling it below the mark makes the service refuse submissions and uploads
// with 507 (and say which file system), turns readiness off and sets the alert metric,
// while a running job carries on; freeing space turns it all back. Needs root for the
// mount; skipped otherwise (the low-state refusal is also covered by the reload test,
// with a mark above the free space).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { get, metricsUrl, sample, scrape } from './scrape.js';

const MiB = 1024 * 1024;

function tryMount(dir: string): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const stateDir = tempDir('disk');
const sessions = join(stateDir, 'sessions');
mkdirSync(sessions, { recursive: true });
const mounted = tryMount(sessions);

describe(
  'disk low-water marks (sessions on an 8 MiB tmpfs)',
  { skip: mounted ? false : 'needs root to mount a tmpfs' },
  () => {
    let ceres: RunningCeres;
    let c: Client;
    let anon: Agent;
    let origin: string;
    before(async () => {
      ceres = await startCeres({
        stateDir,
        config: {
          metrics: { listen: '127.0.0.1:0' },
          // Info level: the line saying space is back is an info line.
          log: { level: 'info' },
          disk: { sessionsLowWater: 3 * MiB, stateLowWater: 0, checkIntervalSeconds: 0.1 },
        },
      });
      c = Client.forUser(ceres);
      anon = new Agent({ connect: { rejectUnauthorized: false } });
      origin = new URL(ceres.url).origin;
    });
    after(async () => {
      await c?.close();
      await anon?.close();
      if (ceres) await stopCeres(ceres);
      try {
        execFileSync('umount', [sessions], { stdio: 'ignore' });
      } catch {
        // not mounted
      }
      removeDir(stateDir);
    });

    const ready = async (): Promise<{ status: number; body: any }> => {
      const r = await request(`${origin}/health/ready`, { dispatcher: anon });
      return { status: r.statusCode, body: await r.body.json() };
    };

    it('below the mark: 507 for submissions and uploads, not ready, alert metric set; a running job finishes; freeing space recovers', async () => {
      assert.equal((await ready()).status, 200);
      assert.equal(sample(await scrape(ceres), 'ceres_disk_low', { area: 'sessions' }), 0);
      // A job that runs through the whole low-space period.
      const [running] = await c.submit('&(executable="/bin/sh")(arguments="-c" "sleep 2; echo done")(stdout="out")');
      // A job waiting for two client uploads: the first fills the disk below the mark.
      const [waiting] = await c.submit('&(executable="/bin/true")(inputfiles=("big" "")("second" ""))');
      const put = await c.req('PUT', `/rest/1.1/jobs/${waiting.id}/session/big`, Buffer.alloc(6 * MiB, 7));
      assert.equal(put.status, 200);

      await until(async () => (await ready()).status === 503, 'readiness off');
      // One warning says so, naming the area (docs/operations.md, "Disk space").
      const lines = (msg: string): { area: string; level: number }[] =>
        ceres
          .output()
          .split('\n')
          .filter((l) => l.includes(msg))
          .map((l) => JSON.parse(l) as { area: string; level: number });
      await until(() => lines('free disk space below the low-water mark').length > 0, 'the low-space warning');
      assert.deepEqual(
        lines('free disk space below the low-water mark').map((l) => [l.area, l.level]),
        [['sessions', 40]],
      );
      assert.deepEqual((await ready()).body, { status: 'not ready', failing: ['disk'] });
      const detailed = await get(metricsUrl(ceres).replace(/metrics$/, 'health/ready'));
      assert.equal(detailed.status, 503);
      assert.match(detailed.text, /sessions below its low-water mark/);

      const sub = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")');
      assert.equal(sub.status, 507);
      assert.equal(sub.json().code, 'CE_ERR_DISK_LOW_SPACE');
      assert.match(sub.json().reason, /sessions file system .* below its low-water mark/);
      const up = await c.req('PUT', `/rest/1.1/jobs/${waiting.id}/session/second`, Buffer.alloc(1000, 1));
      assert.equal(up.status, 507);
      assert.equal(up.json().code, 'CE_ERR_DISK_LOW_SPACE');
      // Without credentials it is the 401 first: nothing is said about the disk.
      const noCred = await request(`${ceres.url}/rest/1.1/jobs?action=new`, {
        method: 'POST',
        body: '&(executable="/bin/true")',
        dispatcher: anon,
      });
      await noCred.body.text();
      assert.equal(noCred.statusCode, 401);
      // What frees or only reads space goes on.
      assert.equal((await c.req('GET', '/rest/1.1/info')).status, 200);
      assert.equal(
        (await c.req('GET', `/rest/1.1/jobs/${waiting.id}/session/big`, undefined, { range: 'bytes=0-9' })).status,
        206,
      );

      const text = await scrape(ceres);
      assert.equal(sample(text, 'ceres_disk_low', { area: 'sessions' }), 1);
      assert.equal(sample(text, 'ceres_disk_low', { area: 'state' }), 0);
      assert.equal(sample(text, 'ceres_ready'), 0);
      assert.ok(
        (sample(text, 'ceres_refusals_total', { route: '/rest/{version}/jobs', code: 'CE_ERR_DISK_LOW_SPACE' }) ?? 0) >=
          1,
      );
      assert.ok(
        (sample(text, 'ceres_refusals_total', {
          route: '/rest/{version}/jobs/{id}/session/*',
          code: 'CE_ERR_DISK_LOW_SPACE',
        }) ?? 0) >= 1,
      );

      assert.equal((await c.waitFor([running.id], ['FINISHED', 'FAILED', 'KILLED'])).get(running.id), 'FINISHED');
      assert.equal((await c.req('GET', `/rest/1.1/jobs/${running.id}/session/out`)).text, 'done\n');

      // Freeing space (the waiting job killed and cleaned) turns it all back.
      await c.action('kill', [waiting.id]);
      await c.waitFor([waiting.id], ['KILLED', 'FAILED', 'FINISHED']);
      await c.action('clean', [waiting.id]);
      await until(async () => (await ready()).status === 200, 'ready again');
      await until(
        () => lines('free disk space back above the low-water mark').length > 0,
        'the line saying space is back',
      );
      assert.deepEqual(
        lines('free disk space back above the low-water mark').map((l) => l.area),
        ['sessions'],
      );
      assert.equal(lines('free disk space below the low-water mark').length, 1, 'said once, not at every check');
      assert.equal(sample(await scrape(ceres), 'ceres_disk_low', { area: 'sessions' }), 0);
      const again = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")');
      assert.equal(again.status, 201);
    });
  },
);
