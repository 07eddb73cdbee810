/**
 * 1,000 open job event streams while 10,000 jobs change state in a minute (issue 46): the
 * service's CPU per event and stream, and its memory, on the real service over real TLS.
 *
 *   npm run build && node dist/bench/event-stream-load.bench.js --scenario owners|filtered|unfiltered \
 *     [--streams 1000] [--changes 10000] [--seconds 60] [--idle 10]
 *
 * Scenarios (each on a fresh service whose store holds exactly the jobs that change):
 *  - owners: `--streams` identities (development tokens with distinct subjects), each with
 *    one unfiltered stream following its own jobs; `--changes / --streams` jobs each. Every
 *    event goes to one stream.
 *  - filtered: one identity (a pilot factory such as aCT) with all the jobs and `--streams`
 *    streams, each with an `id=` filter naming its own `--changes / --streams` jobs. Every
 *    event is offered to every stream, and matched by one.
 *  - unfiltered: one identity with `--streams` unfiltered streams: every event to every
 *    stream (`--changes` x `--streams` deliveries).
 *
 * The changes: each job once, RUNNING -> FINISHED, in a random order, evenly over
 * `--seconds`, through the store's own update (event-stream-setup.ts says why not real
 * jobs). Measured: the service's CPU from the first change until every stream has
 * received what it should (or 30 s more), less what the idle service spends in as long
 * (measured for `--idle` s before the streams open), divided by the deliveries (CPU per
 * delivered event) and by changes x streams (CPU per event per stream); the service's
 * resident memory with the streams open before the first change, at the middle and at
 * the end of the minute, and after the last delivery. The open streams' cost with nothing
 * to send (`--idle` s before the first change) is printed too, and the deliveries' own
 * share beyond it.
 *
 * The changes come from another process, which the service's wake-up on its own writes
 * does not see (src/store/event-signal.ts): the safety-net poll is set to 5 ms here, one
 * read per 5 ms as a stream of the service's own changes at this rate would have.
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  countingStream,
  drive,
  finish,
  loadAverage,
  seededService,
  cpuRate,
  serviceCpuUs,
  serviceRssMiB,
  settle,
  streamConfig,
  tokenAgent,
  until,
  type CountingStream,
} from './event-stream-setup.js';
import { removeDir } from '../test/helpers/service.js';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'owners' },
    streams: { type: 'string', default: '1000' },
    changes: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '60' },
    idle: { type: 'string', default: '10' },
  },
});
const scenario = values.scenario;
if (!['owners', 'filtered', 'unfiltered'].includes(scenario)) throw new Error(`unknown scenario ${scenario}`);
const streams = Number(values.streams);
const changes = Number(values.changes);
const seconds = Number(values.seconds);
const idleS = Number(values.idle);
const perStream = Math.ceil(changes / streams);

const subjects = scenario === 'owners' ? Array.from({ length: streams }, (_, i) => `user-${i}`) : ['pilot-factory'];
const perSubject = scenario === 'owners' ? perStream : changes;
const s = await seededService(subjects, perSubject, streamConfig(streams, true));
const pid = s.ceres.child.pid!;
const agent = tokenAgent(s.ceres);
const open: CountingStream[] = [];
try {
  const url = `${s.ceres.url}/rest/1.1/jobs`;
  await settle(pid);
  const idleUsPerS = await cpuRate(pid, idleS);

  const tokens = new Map<string, string>();
  for (const sub of subjects) tokens.set(sub, await s.token(sub));
  const allIds = [...s.jobs.values()].flat();
  for (let i = 0; i < streams; i++) {
    const sub = scenario === 'owners' ? subjects[i]! : subjects[0]!;
    const filter = scenario === 'filtered' ? `?id=${allIds.slice(i * perStream, (i + 1) * perStream).join(',')}` : '';
    const st = await countingStream(agent, `${url}${filter}`, { authorization: `Bearer ${tokens.get(sub)!}` });
    if (st.status !== 200) throw new Error(`stream ${i}: HTTP ${st.status}`);
    open.push(st);
  }
  await sleep(3000);
  // Open and quiet: the feed's reads and the heartbeats, with nothing to deliver.
  const quietUsPerS = await cpuRate(pid, idleS);
  const expected = scenario === 'unfiltered' ? changes * streams : changes;
  const rss: Record<string, number> = { open: serviceRssMiB(pid) };
  const order = [...allIds].sort(() => Math.random() - 0.5).slice(0, changes);
  const cpu0 = serviceCpuUs(pid);
  const t0 = performance.now();
  const mid = sleep((seconds * 1000) / 2).then(() => (rss.middle = serviceRssMiB(pid)));
  const driven = await drive(order, seconds * 1000, (id) => finish(s.store, id));
  rss.end = serviceRssMiB(pid);
  await mid;
  const delivered = () => open.reduce((n, x) => n + x.states, 0);
  const complete = await until(() => delivered() >= expected || open.every((x) => x.ends > 0), 30_000);
  const wallS = (performance.now() - t0) / 1000;
  const cpuUs = serviceCpuUs(pid) - cpu0;
  rss.afterLast = serviceRssMiB(pid);
  const netUs = cpuUs - idleUsPerS * wallS;
  const got = delivered();
  console.log(
    JSON.stringify(
      {
        scenario,
        streams,
        changes: driven.changed,
        seconds,
        deliveries: got,
        expected,
        complete,
        streamsEnded: open.filter((x) => x.ends > 0).length,
        wallS: Number(wallS.toFixed(1)),
        serviceCpuS: Number((cpuUs / 1e6).toFixed(2)),
        idleCpuMsPerS: Number((idleUsPerS / 1000).toFixed(2)),
        quietStreamsCpuMsPerS: Number((quietUsPerS / 1000).toFixed(2)),
        usPerDelivery: Number((netUs / Math.max(1, got)).toFixed(2)),
        usPerEventPerStream: Number((netUs / (driven.changed * streams)).toFixed(3)),
        // The deliveries' own share: less what the open streams cost with nothing to send.
        usPerDeliveryBeyondQuiet: Number(((cpuUs - quietUsPerS * wallS) / Math.max(1, got)).toFixed(2)),
        rssMiB: rss,
        load: loadAverage(),
      },
      null,
      2,
    ),
  );
} finally {
  for (const x of open) x.close();
  await agent.close().catch(() => {});
  await s.stop();
  removeDir(s.dir);
}
