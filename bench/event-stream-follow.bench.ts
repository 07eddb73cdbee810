/**
 * Following 100,000 jobs: one job event stream against polling them with `action=status`
 * (issue 46: the stream should cost client and service less than 1 % of polling).
 *
 *   npm run build && node dist/bench/event-stream-follow.bench.js [--jobs 100000] [--chunk 1000] \
 *     [--cycles 5] [--quiet 30] [--changes 4000] [--change-seconds 40] [--missed 5000] \
 *     [--model-changes 6] [--model-hours 12] [--burst-ms 50] [--batch-ms 0]
 *
 * The model: a pilot factory (aCT) follows `--jobs` jobs of its one identity. Polling, it
 * asks `action=status` for all of them every 60 s, `--chunk` ids per request, one request
 * after the other on one kept-alive connection (the cheapest way for both sides), and
 * parses every answer. Following, it holds one stream open and parses each event. Each
 * job makes `--model-changes` REST state changes over its `--model-hours` (ACCEPTING to
 * FINISHED), so `--jobs` jobs make jobs x changes / (hours x 60) changes a minute.
 *
 * The window is shortened, and the model computed from parts measured on one service
 * (event-stream-setup.ts seeds it and makes the changes):
 *  1. one poll cycle: the service's CPU (/proc, less its idle rate) and the client's
 *     (process.cpuUsage) for the `--jobs` ids, median of `--cycles`;
 *  2. the stream open with nothing changing, for `--quiet` s: its cost per minute, the
 *     idle service's included (an upper bound: the difference is within the noise);
 *  3. a restart: the service is stopped, `--missed` changes are made while it is down,
 *     it is started again (with the safety-net poll at 5 ms, see 4), and the client
 *     resumes with Last-Event-ID: the cost of the replay, until every missed change is in;
 *  4. `--changes` changes over `--change-seconds` s on the open stream: the cost per
 *     change, less the open stream's quiet rate. The changes come from another process, so
 *     the service reads them by its safety-net poll, set to 5 ms here: one read per 5 ms,
 *     as the wake-up of a change of its own gives; a change then mostly goes out alone,
 *     which is the dearest way (changes made together go out together). `--burst-ms N`
 *     makes them in bursts every N ms instead (50: evenly), as a batch system's poll
 *     reports the changes of all its jobs at once.
 * Then per minute: polling = one cycle; following = the quiet rate + changes a minute x
 * the cost per change; and the resume, once per restart, against one poll cycle.
 */
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import {
  cpuRate,
  drive,
  finish,
  loadAverage,
  seededService,
  serviceCpuUs,
  settle,
  streamConfig,
  tokenAgent,
  until,
  type Seeded,
} from './event-stream-setup.js';
import { JobEvents } from '../src/store/job-events.js';
import { removeDir, startCeres, stopCeres, type RunningCeres } from '../test/helpers/service.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    chunk: { type: 'string', default: '1000' },
    cycles: { type: 'string', default: '5' },
    quiet: { type: 'string', default: '30' },
    changes: { type: 'string', default: '4000' },
    'change-seconds': { type: 'string', default: '40' },
    missed: { type: 'string', default: '5000' },
    'burst-ms': { type: 'string', default: '50' },
    'batch-ms': { type: 'string', default: '0' },
    'model-changes': { type: 'string', default: '6' },
    'model-hours': { type: 'string', default: '12' },
  },
});
const jobs = Number(values.jobs);
const chunk = Number(values.chunk);
const cycles = Number(values.cycles);
const quietS = Number(values.quiet);
const changes = Number(values.changes);
const changeS = Number(values['change-seconds']);
const missed = Number(values.missed);
const burstMs = Number(values['burst-ms']);
/** The stream's `batch=` (0: none): events gathered for up to this long, one write. */
const batchMs = Number(values['batch-ms']);
const perMinute = (jobs * Number(values['model-changes'])) / (Number(values['model-hours']) * 60);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const clientUs = () => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

/** A stream reader that parses every event as a client keeping its jobs' states would. */
function follow(ceres: RunningCeres, agent: ReturnType<typeof tokenAgent>, token: string, lastId?: string) {
  const ac = new AbortController();
  const states = new Map<string, string>();
  const s = { events: 0, lastId, close: () => ac.abort() };
  const opened = request(`${ceres.url}/rest/1.1/jobs${batchMs > 0 ? `?batch=${batchMs}` : ''}`, {
    dispatcher: agent,
    headers: {
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
      ...(lastId !== undefined ? { 'last-event-id': lastId } : {}),
    },
    signal: ac.signal,
  }).then((r) => {
    if (r.statusCode !== 200) throw new Error(`stream: HTTP ${r.statusCode}`);
    let buf = '';
    r.body.setEncoding('utf8');
    r.body.on('data', (chunkText: string) => {
      buf += chunkText;
      let end = buf.indexOf('\n\n');
      let from = 0;
      for (; end >= 0; end = buf.indexOf('\n\n', from)) {
        const block = buf.slice(from, end);
        from = end + 2;
        if (!block.includes('event: state')) continue;
        let data = '';
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) s.lastId = line.slice(4);
          else if (line.startsWith('data: ')) data = line.slice(6);
        }
        const e = JSON.parse(data) as { id: string; state: string };
        states.set(e.id, e.state);
        s.events++;
      }
      buf = buf.slice(from);
    });
    r.body.on('error', () => {});
  });
  return { s, opened };
}

/** One poll cycle: every id, `chunk` per request, answers parsed. Returns the states seen. */
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

const s = await seededService(['act'], jobs, streamConfig(10, false));
let ceres = s.ceres;
const ids = [...s.jobs.get('act')!];
const token = await s.token('act');
let agent = tokenAgent(ceres, 1);
try {
  let pid = ceres.child.pid!;
  await settle(pid, 2000, 5);
  const idle = await cpuRate(pid, quietS);

  // 1. Polling.
  await pollCycle(ceres, agent, token, ids); // warm-up, outside the figures
  const pollService: number[] = [];
  const pollClient: number[] = [];
  for (let i = 0; i < cycles; i++) {
    const sv = serviceCpuUs(pid);
    const cl = clientUs();
    const t = performance.now();
    await pollCycle(ceres, agent, token, ids);
    pollClient.push(clientUs() - cl);
    pollService.push(serviceCpuUs(pid) - sv - (idle * (performance.now() - t)) / 1000);
  }

  // 2. The stream open, nothing changing.
  const streamAgent = tokenAgent(ceres);
  const f = follow(ceres, streamAgent, token);
  await f.opened;
  await sleep(2000);
  let sv = serviceCpuUs(pid);
  let cl = clientUs();
  await sleep(quietS * 1000);
  // Not less the idle rate: the two are a few ms/s each and the difference would be noise;
  // the whole (an upper bound of the stream's share) goes into the model.
  const quietService = (serviceCpuUs(pid) - sv) / quietS;
  const quietClient = (clientUs() - cl) / quietS;
  f.s.close();
  await streamAgent.close();
  await agent.close();

  // 3. A restart: changes while the service is down, then the resume.
  await stopCeres(ceres);
  // What the client would resume from: it saw no event yet, so the newest when it opened.
  const before = f.s.lastId ?? String(new JobEvents(s.db).latest());
  let downChanged = 0;
  for (const id of ids.slice(0, missed)) if (finish(s.store, id)) downChanged++;
  if (downChanged !== missed) throw new Error(`${downChanged} of ${missed} changes made while down`);
  ceres = await startCeres({
    stateDir: s.dir,
    config: streamConfig(10, true),
  });
  pid = ceres.child.pid!;
  await settle(pid, 2000, 5);
  const idle5 = await cpuRate(pid, 10);
  agent = tokenAgent(ceres);
  sv = serviceCpuUs(pid);
  cl = clientUs();
  let t = performance.now();
  const r = follow(ceres, agent, token, before);
  await r.opened;
  const resumed = await until(() => r.s.events >= missed, 120_000);
  const resumeMs = performance.now() - t;
  const resumeService = serviceCpuUs(pid) - sv - (idle5 * resumeMs) / 1000;
  const resumeClient = clientUs() - cl;
  // The open stream's cost with the 5 ms safety-net poll and nothing changing, taken off below.
  await sleep(1000);
  const quiet5 = await cpuRate(pid, quietS);

  // 4. Changes on the open stream.
  const rest = ids.slice(missed, missed + changes);
  sv = serviceCpuUs(pid);
  cl = clientUs();
  t = performance.now();
  const driven = await drive(rest, changeS * 1000, (id) => finish(s.store, id), burstMs);
  const delivered = await until(() => r.s.events >= missed + driven.changed, 60_000);
  const changeMs = performance.now() - t;
  const perChangeService = (serviceCpuUs(pid) - sv - (quiet5 * changeMs) / 1000) / driven.changed;
  const perChangeClient = (clientUs() - cl - driven.driverCpuUs) / driven.changed;
  r.s.close();

  const pollPerMin = { service: median(pollService), client: median(pollClient) };
  const streamPerMin = {
    service: quietService * 60 + perMinute * perChangeService,
    client: quietClient * 60 + perMinute * perChangeClient,
  };
  const ms = (us: number) => Number((us / 1000).toFixed(2));
  console.log(
    JSON.stringify(
      {
        jobs,
        chunk,
        model: { changesPerMinute: Math.round(perMinute) },
        idleServiceMsPerS: ms(idle),
        quietFastPollServiceMsPerS: ms(quiet5),
        pollCycle: { serviceMs: ms(pollPerMin.service), clientMs: ms(pollPerMin.client), runs: cycles },
        streamQuietWithIdle: { serviceMsPerMin: ms(quietService * 60), clientMsPerMin: ms(quietClient * 60) },
        perChange: {
          burstMs,
          batchMs,
          serviceUs: Number(perChangeService.toFixed(1)),
          clientUs: Number(perChangeClient.toFixed(1)),
          changes: driven.changed,
          delivered,
        },
        resume: {
          missed,
          complete: resumed,
          serviceMs: ms(resumeService),
          clientMs: ms(resumeClient),
          wallMs: Math.round(resumeMs),
        },
        perMinute: {
          pollingMs: ms(pollPerMin.service + pollPerMin.client),
          streamMs: ms(streamPerMin.service + streamPerMin.client),
          streamServiceMs: ms(streamPerMin.service),
          streamClientMs: ms(streamPerMin.client),
          ratioPercent: Number(
            ((100 * (streamPerMin.service + streamPerMin.client)) / (pollPerMin.service + pollPerMin.client)).toFixed(
              2,
            ),
          ),
          resumeInPollCycles: Number(
            ((resumeService + resumeClient) / (pollPerMin.service + pollPerMin.client)).toFixed(3),
          ),
        },
        load: loadAverage(),
      },
      null,
      2,
    ),
  );
} finally {
  await agent.close().catch(() => {});
  s.db.close();
  await stopCeres(ceres);
  removeDir(s.dir);
}
