// An open job event stream keeps the authorization it was opened with only while the caller
// still has it (real service, real TLS): a grid-mapfile line taken out ends the stream of
// that DN with `event: end` reason not-authorized, at once on a reload (SIGHUP) and by the
// next heartbeat without one; a monitor whose role goes (its group's line taken out, while
// another group still allows it) loses its stream of the VO's jobs but keeps its own; a
// caller that keeps its authorization keeps its stream, and a busy stream is asked as a
// quiet one is.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { dataOf, openStream, type SseStream } from '../helpers/sse.js';

const TRUE_JOB = '&(executable="/bin/true")';

for (const how of ['SIGHUP', 'heartbeat'] as const) {
  describe(`event streams lose what authorization is taken away (${how})`, () => {
    let stateDir: string;
    let gridMap: string;
    let managers: string;
    let ceres: RunningCeres;
    const dns: Record<string, string> = {};
    const clients: Client[] = [];
    const streams: SseStream[] = [];
    const client = (name: string): Client => {
      const c = new Client(ceres.url, join(ceres.pkiDir, `${name}-proxy.pem`), join(ceres.pkiDir, 'ca.pem'));
      clients.push(c);
      return c;
    };
    const follow = async (c: Client, query = ''): Promise<SseStream> => {
      const s = await openStream(c.agent, `${ceres.url}/rest/1.1/jobs${query}`);
      streams.push(s);
      assert.equal(s.status, 200, s.text);
      return s;
    };
    /** The files edited; with SIGHUP the service is told at once, else it finds out by itself. */
    const edit = (file: string, text: string): void => {
      writeFileSync(file, text);
      if (how === 'SIGHUP') ceres.child.kill('SIGHUP');
    };
    const ended = (s: SseStream) => s.waitFor((e) => e.event === 'end', 'the stream ended', 30_000);

    before(async () => {
      stateDir = tempDir('stream-authz');
      const pki = await initDevPki(join(stateDir, 'pki'));
      for (const u of ['ann', 'ben', 'cal', 'mia']) dns[u] = (await addDevUser(pki.dir, u)).dn;
      gridMap = join(stateDir, 'grid-mapfile');
      managers = join(stateDir, 'managers-mapfile');
      writeFileSync(gridMap, `"${dns.ann}" nobody\n"${dns.ben}" nobody\n"${dns.cal}" nobody\n`);
      writeFileSync(managers, `"${dns.mia}" nobody\n`);
      ceres = await startCeres({
        stateDir,
        config: {
          cluster: { queues: [{ name: 'main' }] },
          authorization: {
            groups: [
              { name: 'local', match: [{ gridMapFile: gridMap }] },
              { name: 'staff', match: [{ subject: dns.mia }] },
              { name: 'managers', match: [{ gridMapFile: managers }] },
            ],
            allow: ['local', 'staff', 'managers'],
            monitors: [{ group: 'managers', vos: ['atlas'] }],
          },
          // With SIGHUP the heartbeat never comes during the test: the reload alone must do it.
          events: { heartbeatSeconds: how === 'SIGHUP' ? 3600 : 0.5 },
        },
      });
    });
    after(async () => {
      for (const s of streams) s.close();
      for (const c of clients) await c.close();
      await stopCeres(ceres);
      removeDir(stateDir);
    });

    it("a DN taken out of the grid-mapfile loses its stream: end not-authorized; another DN's goes on", async () => {
      const ann = client('ann');
      const ben = client('ben');
      const annStream = await follow(ann);
      const benStream = await follow(ben);
      edit(gridMap, `"${dns.ben}" nobody\n"${dns.cal}" nobody\n`);
      const end = await ended(annStream);
      assert.equal(dataOf(end).reason, 'not-authorized');
      // Ben is still allowed: his stream stays and carries his next job.
      const [j] = await ben.submit(TRUE_JOB);
      await benStream.waitFor((e) => e.event === 'state' && dataOf(e).id === j.id, "ben's job on his stream", 30_000);
      assert.equal(benStream.ended(), false);
      // And Ann cannot open another one.
      const again = await openStream(ann.agent, `${ceres.url}/rest/1.1/jobs`);
      assert.equal(again.status, 403);
    });

    it('a stream that keeps delivering loses it too (asked at every tick, not only when quiet)', async () => {
      const cal = client('cal');
      const stream = await follow(cal);
      // 30 jobs ending 0.4 s apart: the stream is never quiet for a tick (0.5 s) for 12 s.
      const jobs = await cal.submit(
        `+${Array.from({ length: 30 }, (_, i) => `(&(executable="/bin/sleep")(arguments="${(0.4 * (i + 1)).toFixed(1)}"))`).join('')}`,
      );
      assert.equal(jobs.length, 30);
      await stream.waitFor((e) => e.event === 'state' && dataOf(e).state === 'FINISHED', 'a first job ended', 60_000);
      edit(gridMap, `"${dns.ben}" nobody\n`);
      const end = await ended(stream);
      assert.equal(dataOf(end).reason, 'not-authorized');
      // Ended while its jobs still changed, not only once they had all ended and it went quiet.
      const finished = stream.events.filter((e) => e.event === 'state' && dataOf(e).state === 'FINISHED').length;
      assert.ok(finished < 30, `the stream ended only after all ${finished} jobs had ended`);
    });

    it("a monitor whose role is taken away loses the VO's stream, and keeps its own", async () => {
      const mia = client('mia');
      const vo = await follow(mia, '?monitor=atlas');
      const own = await follow(mia);
      edit(managers, '# nobody manages atlas now\n');
      const end = await ended(vo);
      assert.equal(dataOf(end).reason, 'not-authorized');
      assert.equal((await openStream(mia.agent, `${ceres.url}/rest/1.1/jobs?monitor=atlas`)).status, 403);
      const [j] = await mia.submit(TRUE_JOB);
      await own.waitFor((e) => e.event === 'state' && dataOf(e).id === j.id, "mia's own job on her stream", 30_000);
      assert.equal(own.ended(), false);
    });
  });
}
