/**
 * Following 100,000 jobs: one job event stream against polling them with `action=status`
 * (issue 46: the stream should cost client and service less than 1 % of polling).
 *
 *   npm run build && node dist/bench/event-stream-follow.bench.js [--jobs 100000] [--chunk 1000] \
 *     [--cycles 5] [--rounds 3] [--quiet 10] [--events 20000] [--event-seconds 10] \
 *     [--lone 1500] [--lone-rate 100] [--tick-ms 1] [--missed 5000] [--batch-ms 10000] \
 *     [--model-changes 6] [--model-hours 12] [--changes service|connection]
 *
 * The model: a pilot factory (aCT) follows `--jobs` jobs of its one identity. Polling, it
 * asks `action=status` for all of them every 60 s, `--chunk` ids per request, one request
 * after the other on one kept-alive connection, and parses every answer. Following, it
 * holds one stream open (`batch=--batch-ms`, 0: none) and parses every event. Each job
 * makes `--model-changes` REST changes over `--model-hours` (ACCEPTING to FINISHED), so
 * the jobs make jobs x changes / (hours x 60) changes a minute (833 at the defaults).
 *
 * A followed minute costs a few ms against the idle service's hundreds, so it is not
 * measured whole (the difference would be noise) but built from parts, each measured many
 * times over in one window so that it stands well above the noise, and each as the
 * difference between rounds with the stream and without, alternating (`--rounds` each,
 * medians). The following client runs in a process of its own (event-stream-client.ts:
 * what a careful client writes, parsing every event's JSON), so its CPU time is its own.
 * The changes (`--changes service`, the default) are made inside the service, on its own
 * database connection, by a driver loaded into its process (event-stream-driver.ts): the
 * write signal wakes the feed and the feed reads pages its connection just wrote, as for
 * the engine's own changes; the driver's CPU, timed around its calls, is taken out of the
 * service's. `--changes connection` makes them from this process on a second connection,
 * read by the safety-net poll with the connection's page cache discarded at every read
 * (the way of the figures before 2026-12-03).
 *
 * Service 1 (the configuration's defaults: safety-net poll 1 s, heartbeat 15 s):
 *  1. one poll cycle of every id: service CPU (less its idle rate) and client CPU, median
 *     of `--cycles`;
 *  2. quiet: the stream open with nothing changing against no stream, `--quiet` s each;
 *  3. per event: `--events` changes over `--event-seconds` s (a read of about a thousand
 *     events a second, `batch=1000`), against the same changes with no stream open: the
 *     cost per event of reading, handing over, encoding, writing, reading and parsing.
 * Service 2 (the safety-net poll at `--tick-ms`):
 *  4. a restart: `--missed` changes made while it was down, and the resume (Last-Event-ID)
 *     until all are in;
 *  5. a tick: the stream open, nothing changing, against no stream: the safety-net poll's
 *     cost per tick (1,000 ticks a second at 1 ms);
 *  6. per lone change: `--lone` changes at `--lone-rate` a second, each read and written
 *     alone (batch=0), against the same changes with no stream open: less the per-event
 *     cost, the fixed cost of one read and one write (service) and of one chunk (client).
 * The minute at the model: polling = one cycle; following = the safety-net ticks (60, or one
 * per `batch=` period) + one read and write per `batch=` period or heartbeat, whichever is
 * shorter (a heartbeat tick takes what a gathering stream holds along; each change alone
 * without `batch=`) + a heartbeat, at a lone change's cost, for each heartbeat tick with
 * nothing written + changes x the per-event cost, for the service; the client's quiet
 * rate + one chunk per write or heartbeat + changes x its per-event cost. Shown for
 * `--batch-ms`, without `batch=` and with `batch=60000` (a minute: the staleness of polling).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import {
  cpuRate,
  drive,
  DRIVER_ARGS,
  flip,
  serviceDriver,
  loadAverage,
  seededService,
  serviceCpuUs,
  settle,
  streamConfig,
  tokenAgent,
  type Seeded,
} from './event-stream-setup.js';
import type { ClientReport, ClientRequest } from './event-stream-client.js';
import { JobEvents } from '../src/store/job-events.js';
import { eventsSection } from '../src/config/sections/events.js';
import { removeDir, startCeres, stopCeres, type RunningCeres } from '../test/helpers/service.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    chunk: { type: 'string', default: '1000' },
    cycles: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    quiet: { type: 'string', default: '10' },
    events: { type: 'string', default: '20000' },
    'event-seconds': { type: 'string', default: '10' },
    lone: { type: 'string', default: '1500' },
    'lone-rate': { type: 'string', default: '100' },
    'tick-ms': { type: 'string', default: '1' },
    missed: { type: 'string', default: '5000' },
    'batch-ms': { type: 'string', default: '10000' },
    'model-changes': { type: 'string', default: '6' },
    'model-hours': { type: 'string', default: '12' },
    changes: { type: 'string', default: 'service' },
  },
});
const num = (k: keyof typeof values) => Number(values[k]);
const jobs = num('jobs');
const chunk = num('chunk');
const rounds = num('rounds');
const quietS = num('quiet');
const nEvents = num('events');
const eventS = num('event-seconds');
const nLone = num('lone');
const loneRate = num('lone-rate');
const tickMs = num('tick-ms');
const missed = num('missed');
const batchMs = num('batch-ms');
if (values.changes !== 'service' && values.changes !== 'connection')
  throw new Error(`--changes service|connection, not ${values.changes}`);
const inService = values.changes === 'service';
const perMinute = (jobs * num('model-changes')) / (num('model-hours') * 60);
const defaults = eventsSection.events.properties;
const heartbeatsPerMin = 60 / (defaults.heartbeatSeconds.default as number);
const ticksPerMin = 60_000 / (defaults.fallbackPollMilliseconds.default as number);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[]) => [Math.min(...xs), Math.max(...xs)].map((x) => Number(x.toFixed(2)));
const clientUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** The following client's process (event-stream-client.ts), one request at a time. */
function followingClient() {
  const prof = process.env.CERES_BENCH_PROF_DIR;
  const child: ChildProcess = fork(new URL('./event-stream-client.js', import.meta.url), [], {
    execArgv: prof !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [],
  });
  const ask = (m: ClientRequest): Promise<ClientReport> =>
    new Promise((resolve, reject) => {
      child.once('message', (r: ClientReport) => (r.ok ? resolve(r) : reject(new Error(`client ${r.op}: ${r.error}`))));
      child.send(m);
    });
  return {
    ask,
    open: (c: RunningCeres, token: string, batch: number, lastId?: string) =>
      ask({
        op: 'open',
        url: `${c.url}/rest/1.1/jobs${batch > 0 ? `?batch=${batch}` : ''}`,
        token,
        ca: join(c.pkiDir, 'ca.pem'),
        ...(lastId !== undefined ? { lastId } : {}),
      }),
    exit: async () => {
      child.send({ op: 'exit' });
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(5000)]);
    },
  };
}

/** One poll cycle: every id, `chunk` per request, answers parsed. */
async function pollCycle(c: Seeded['ceres'], agent: ReturnType<typeof tokenAgent>, token: string, ids: string[]) {
  let n = 0;
  for (let i = 0; i < ids.length; i += chunk) {
    const body = JSON.stringify({ job: ids.slice(i, i + chunk).map((id) => ({ id })) });
    const r = await request(`${c.url}/rest/1.1/jobs?action=status`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body,
    });
    const answer = (await r.body.json()) as { job: { id: string; state?: string }[] };
    n += answer.job.filter((j) => j.state !== undefined).length;
  }
  if (n !== ids.length) throw new Error(`a poll cycle answered ${n} of ${ids.length} states`);
}

/** The service's CPU (µs) and the wall time (ms) of `fn`. */
async function window(pid: number, fn: () => Promise<unknown>): Promise<{ cpu: number; ms: number }> {
  const c0 = serviceCpuUs(pid);
  const t0 = performance.now();
  await fn();
  return { cpu: serviceCpuUs(pid) - c0, ms: performance.now() - t0 };
}

/** Changes `ids` over `ms` through the store, each id again from the start when all are used. */
let next = 0;
function changeIds(all: readonly string[], n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(all[(next++ + missed) % all.length]!);
  return out;
}

const s = await seededService(['act'], jobs, streamConfig(10, false), inService ? DRIVER_ARGS : []);
let ceres = s.ceres;
let driver = inService ? await serviceDriver(s.dir) : undefined;
/**
 * Makes one change per id over `ms`: in the service (--changes service) or on a second
 * connection. `own`: the CPU of the changes themselves in the service (the driver's, timed
 * around its calls), which a window of the service's CPU leaves out; 0 from the bench.
 */
const change = async (list: readonly string[], ms: number, tick?: number) => {
  if (driver === undefined)
    return { changed: (await drive(list, ms, (id) => flip(s.store, id), tick)).changed, own: 0 };
  const r = await driver.drive(list, ms, tick);
  return { changed: r.changed, own: r.driverCpuUs };
};
const ids = [...s.jobs.get('act')!];
const token = await s.token('act');
const agent = tokenAgent(ceres, 1);
const client = followingClient();
try {
  let pid = ceres.child.pid!;
  await settle(pid, 2000, 5);
  const idle = await cpuRate(pid, 10);

  // 1. Polling.
  await pollCycle(ceres, agent, token, ids); // warm-up, outside the figures
  const pollService: number[] = [];
  const pollClient: number[] = [];
  for (let i = 0; i < num('cycles'); i++) {
    const cl = clientUs();
    const w = await window(pid, () => pollCycle(ceres, agent, token, ids));
    pollClient.push(clientUs() - cl);
    pollService.push(w.cpu - (idle * w.ms) / 1000);
  }
  await agent.close();

  // 2. Quiet, and 3. per event: rounds without and with the stream, alternating.
  const quietService: number[] = [];
  const quietClient: number[] = [];
  const evService: number[] = [];
  const evClient: number[] = [];
  const evChunks: number[] = [];
  /**
   * `n` changes over `ms` (a slice every `tickMs`), with the stream open or not: the
   * service's CPU less the changes' own, and the client's reports around them.
   */
  const changesWindow = async (open: boolean, n: number, ms: number, tickMs?: number, timeoutMs = 120_000) => {
    const changes = changeIds(ids, n);
    const c0 = open ? await client.ask({ op: 'stat' }) : undefined;
    let changed = 0;
    let own = 0;
    const w = await window(pid, async () => {
      ({ changed, own } = await change(changes, ms, tickMs));
      if (c0 !== undefined) await client.ask({ op: 'waitFor', events: c0.events + changed, timeoutMs });
    });
    const c1 = open ? await client.ask({ op: 'stat' }) : undefined;
    return { w: { cpu: w.cpu - own, ms: w.ms }, changed, c0, c1 };
  };
  const ev = (open: boolean) => changesWindow(open, nEvents, eventS * 1000);
  for (let i = 0; i < rounds; i++) {
    const a = await window(pid, () => sleep(quietS * 1000));
    await client.open(ceres, token, batchMs);
    await sleep(1000);
    const c0 = await client.ask({ op: 'stat' });
    const b = await window(pid, () => sleep(quietS * 1000));
    const c1 = await client.ask({ op: 'stat' });
    await client.ask({ op: 'close' });
    quietService.push(((b.cpu / b.ms - a.cpu / a.ms) * 60_000) / 1000);
    quietClient.push(((c1.cpuUs - c0.cpuUs) / b.ms) * 60);

    const without = await ev(false);
    await client.open(ceres, token, 1000);
    await sleep(1000);
    const withS = await ev(true);
    await client.ask({ op: 'close' });
    evService.push((withS.w.cpu - (without.w.cpu / without.w.ms) * withS.w.ms) / withS.changed);
    evClient.push((withS.c1!.cpuUs - withS.c0!.cpuUs) / withS.changed);
    evChunks.push(withS.c1!.chunks - withS.c0!.chunks);
  }

  // 4. A restart: changes while the service is down, then the resume.
  await stopCeres(ceres);
  const before = String(new JobEvents(s.db).latest());
  let downChanged = 0;
  for (const id of ids.slice(0, missed)) if (flip(s.store, id)) downChanged++;
  if (downChanged !== missed) throw new Error(`${downChanged} of ${missed} changes made while down`);
  ceres = await startCeres({
    stateDir: s.dir,
    config: streamConfig(10, tickMs),
    nodeArgs: inService ? DRIVER_ARGS : [],
  });
  pid = ceres.child.pid!;
  if (inService) driver = await serviceDriver(s.dir);
  await settle(pid, 2000, 5);
  const idle2 = await cpuRate(pid, 10);
  const c0 = await client.ask({ op: 'stat' });
  const resume = await window(pid, async () => {
    await client.open(ceres, token, 0, before);
    await client.ask({ op: 'waitFor', events: c0.events + missed, timeoutMs: 120_000 });
  });
  const c1 = await client.ask({ op: 'stat' });
  const resumeService = resume.cpu - (idle2 * resume.ms) / 1000;
  const resumeClient = c1.cpuUs - c0.cpuUs;
  await client.ask({ op: 'close' });

  // 5. The safety-net tick, and 6. lone changes.
  const tick: number[] = [];
  const loneService: number[] = [];
  const loneClient: number[] = [];
  const loneWindow = async (open: boolean) => {
    const r = await changesWindow(open, nLone, (nLone / loneRate) * 1000, 1000 / loneRate, 60_000);
    return {
      serviceUs: r.w.cpu / r.changed,
      clientUs: r.c0 && r.c1 ? (r.c1.cpuUs - r.c0.cpuUs) / r.changed : 0,
    };
  };
  for (let i = 0; i < rounds; i++) {
    // The same lone changes with no stream open: what the service does for them anyway
    // (its writes' checkpoints, the site series), taken out of the stream's figure.
    const none = await loneWindow(false);
    const a = await window(pid, () => sleep(quietS * 1000));
    await client.open(ceres, token, 0);
    await sleep(1000);
    const b = await window(pid, () => sleep(quietS * 1000));
    const ticks = (b.ms / tickMs) * 1;
    tick.push((b.cpu - (a.cpu / a.ms) * b.ms) / ticks);
    const lone = await loneWindow(true);
    await client.ask({ op: 'close' });
    loneService.push(lone.serviceUs - none.serviceUs);
    loneClient.push(lone.clientUs);
    await sleep(500);
  }

  const poll = { service: median(pollService), client: median(pollClient) };
  const part = {
    eventService: median(evService),
    eventClient: median(evClient),
    loneService: median(loneService),
    loneClient: median(loneClient),
    tick: median(tick),
    quietClientPerMin: median(quietClient),
  };
  // One read and one write (service), one chunk (client): a lone change less an event.
  const fixedService = Math.max(0, part.loneService - part.eventService);
  const fixedClient = Math.max(0, part.loneClient - part.eventClient);
  const model = (batch: number) => {
    // A gathering stream writes once per period, and a heartbeat tick takes what it holds
    // along: at most one write per period or per heartbeat, whichever is shorter.
    const period = batch > 0 ? Math.min(batch, 60_000 / heartbeatsPerMin) : 0;
    const writes = period > 0 ? Math.min(perMinute, 60_000 / period) : perMinute;
    // A heartbeat goes out only on a tick with nothing written since the last.
    const heartbeats = Math.max(0, heartbeatsPerMin - writes);
    // The safety net ticks once per period while every open stream gathers (src/jobs/event-feed.ts).
    const ticks = batch > 0 ? Math.min(ticksPerMin, 60_000 / batch) : ticksPerMin;
    const service =
      ticks * part.tick + heartbeats * part.loneService + writes * fixedService + perMinute * part.eventService;
    const cl = part.quietClientPerMin + (writes + heartbeats) * fixedClient + perMinute * part.eventClient;
    return {
      batchMs: batch,
      writesPerMin: Number(writes.toFixed(1)),
      heartbeatsPerMin: Number(heartbeats.toFixed(1)),
      ticksPerMin: Number(ticks.toFixed(1)),
      serviceMs: ms(service),
      clientMs: ms(cl),
      streamMs: ms(service + cl),
      pollingMs: ms(poll.service + poll.client),
      ratioPercent: Number(((100 * (service + cl)) / (poll.service + poll.client)).toFixed(2)),
      perChangeBothUs: Number(
        ((writes * (fixedService + fixedClient)) / perMinute + part.eventService + part.eventClient).toFixed(2),
      ),
    };
  };
  const us = (x: number) => Number(x.toFixed(2));
  console.log(
    JSON.stringify(
      {
        jobs,
        chunk,
        model: { changesPerMinute: Math.round(perMinute), changesFrom: values.changes },
        idleServiceMsPerS: ms(idle),
        idleService2MsPerS: ms(idle2),
        pollCycle: { serviceMs: ms(poll.service), clientMs: ms(poll.client), runs: pollService.length },
        quiet: {
          serviceMsPerMin: us(median(quietService) / 1000),
          serviceSpread: spread(quietService.map((x) => x / 1000)),
          clientMsPerMin: us(part.quietClientPerMin / 1000),
          clientSpread: spread(quietClient.map((x) => x / 1000)),
        },
        perEvent: {
          changes: nEvents,
          serviceUs: us(part.eventService),
          serviceSpread: spread(evService),
          clientUs: us(part.eventClient),
          clientSpread: spread(evClient),
          clientChunksPerRound: evChunks,
        },
        tick: { ms: tickMs, serviceUs: us(part.tick), spread: spread(tick) },
        loneChange: {
          changes: nLone,
          serviceUs: us(part.loneService),
          serviceSpread: spread(loneService),
          clientUs: us(part.loneClient),
          clientSpread: spread(loneClient),
          fixedServiceUs: us(fixedService),
          fixedClientUs: us(fixedClient),
        },
        resume: { missed, serviceMs: ms(resumeService), clientMs: ms(resumeClient), wallMs: Math.round(resume.ms) },
        perMinute: { batched: model(batchMs), unbatched: model(0), batchedMinute: model(60_000) },
        load: loadAverage(),
      },
      null,
      2,
    ),
  );
} finally {
  await client.exit().catch(() => {});
  await agent.close().catch(() => {});
  s.db.close();
  await stopCeres(ceres);
  removeDir(s.dir);
}

function ms(us: number): number {
  return Number((us / 1000).toFixed(2));
}
