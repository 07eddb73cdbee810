/**
 * One soak run, with or without chaos: the mix for a while (the RSS sampled all along),
 * optionally a killer that `kill -9`s the service every few seconds and starts it
 * again, then the checks: uploads still owed are made (or their jobs killed), and
 * every acknowledged job is followed to its end (verify.ts). Shared by the bench
 * scenario `soak`, the chaos command (bench/chaos.ts) and the short tests.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { summarize, type Summary } from '../harness/stats.js';
import { chunks } from '../harness/job-bodies.js';
import type { Ledger } from './ledger.js';
import { Mix, type MixUser } from './mix.js';
import { growth, RssSampler, type RssGrowth, type RssSample } from './rss.js';
import type { RouteSummary } from './tally.js';
import { verifyJobs, type Verdict } from './verify.js';
import type { CeresService, ServiceExit } from './service.js';

export interface ChaosOptions {
  readonly service: CeresService;
  /** Milliseconds between kills, drawn uniformly from [min, max]. */
  readonly minMs: number;
  readonly maxMs: number;
  /**
   * The mix goes on past its seconds (up to three times as long) until this many kills were
   * made: the kills, not the seconds, are what a chaos run is about, and on a loaded machine
   * (test files side by side) each restart takes longer, leaving fewer kills in the seconds.
   */
  readonly minKills?: number;
  /** The longest the mix goes on for those kills, in seconds (default: three times its seconds). */
  readonly maxS?: number;
}

export interface SoakOptions {
  readonly users: readonly MixUser[];
  readonly clients: number;
  readonly seconds: number;
  /** RSS "after warm-up" is the first sample after this many seconds. */
  readonly warmupS: number;
  readonly ledger: Ledger;
  /** Server pids for the RSS (asked at every sample). */
  readonly pids: () => readonly number[];
  /** Longest wait for every job to end after the mix. */
  readonly settleS: number;
  readonly runId: string;
  readonly uploadBytes?: number;
  /** Seconds the kill jobs sleep (the mix's default: 30). */
  readonly killSleepS?: number;
  readonly chaos?: ChaosOptions;
  /** The service, when the harness started it: its crashes are reported, a dead one is not waited for. */
  readonly service?: CeresService;
  /** Otherwise, whether the server process still runs (checked every 2 s); a soak stops when it is gone. */
  readonly alive?: () => Promise<boolean>;
  /** Stop early (Ctrl-C, a scenario's budget). */
  readonly interrupted?: () => boolean;
  readonly progress?: (text: string) => void;
  /** Clean every job of the run after the checks (each user its own). */
  readonly cleanAtEnd?: boolean;
}

export interface ChaosReport {
  readonly kills: number;
  readonly restarts: number;
  readonly restartMs: Summary;
  readonly restartFailures: string[];
}

export interface SoakReport {
  readonly clients: number;
  readonly users: number;
  readonly seconds: number;
  readonly requests: number;
  readonly reqPerS: number;
  readonly latencyMs: Summary;
  readonly fiveXx: number;
  readonly fiveXxText: string;
  readonly transportFailures: number;
  readonly transportText: string;
  readonly routes: RouteSummary[];
  readonly ops: Record<string, number>;
  readonly abortedUploads: number;
  readonly abortedAnswers: Record<string, number>;
  readonly rss: { readonly series: RssSample[]; readonly growth?: RssGrowth };
  readonly owedUploads: { uploaded: number; killed: number; answers: Record<string, number> };
  readonly verdict: Verdict;
  readonly chaos?: ChaosReport;
  /** Exits of the service the harness did not cause (when it started the service). */
  readonly crashes: ServiceExit[];
  /** Soak (no chaos): seconds into the run at which the service was found gone, when it was. */
  readonly serviceGoneAfterS?: number;
}

async function killer(
  c: ChaosOptions,
  stop: () => boolean,
  onKill: (kills: number) => void,
  progress?: (t: string) => void,
): Promise<ChaosReport> {
  let kills = 0;
  let restarts = 0;
  const restartMs: number[] = [];
  const restartFailures: string[] = [];
  while (!stop()) {
    const until = Date.now() + c.minMs + Math.random() * (c.maxMs - c.minMs);
    while (Date.now() < until && !stop()) await sleep(Math.min(100, until - Date.now()));
    if (stop()) break;
    // A service that died by itself since the last restart is not killed, only restarted.
    if (c.service.running) {
      await c.service.kill9();
      onKill(++kills);
    }
    const t = Date.now();
    try {
      await c.service.restart();
      restarts++;
      restartMs.push(Date.now() - t);
      progress?.(`kill -9 #${kills}, restarted in ${Date.now() - t} ms`);
    } catch (e) {
      restartFailures.push((e as Error).message.slice(0, 400));
      if (restartFailures.length >= 3) break;
    }
  }
  return { kills, restarts, restartMs: summarize(restartMs), restartFailures };
}

/** One clean per 500 jobs still there; what cannot be cleaned stays (the run's notes say how many jobs there were). */
async function cleanJobs(users: readonly MixUser[], mix: Mix): Promise<void> {
  for (const [u, user] of users.entries()) {
    const ids = [...mix.jobs.values()].filter((j) => j.user === u && !j.cleaned).map((j) => j.id);
    for (const part of chunks(ids, 500)) await user.client.action('clean', part).catch(() => undefined);
  }
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const t0 = performance.now();
  const end = t0 + o.seconds * 1000;
  const service = o.chaos?.service ?? o.service;
  // Without chaos a dead service ends the soak: its clients would only count refusals.
  let goneAfterS: number | undefined;
  let kills = 0;
  const minKills = o.chaos?.minKills ?? 0;
  const latest = t0 + (o.chaos?.maxS ?? 3 * o.seconds) * 1000;
  const over = (now: number): boolean => (now >= end && kills >= minKills) || now >= latest;
  const stop = (): boolean => over(performance.now()) || o.interrupted?.() === true || goneAfterS !== undefined;
  const mix = new Mix({
    users: o.users,
    clients: o.clients,
    ledger: o.ledger,
    stop,
    runId: o.runId,
    ...(o.uploadBytes !== undefined ? { uploadBytes: o.uploadBytes } : {}),
    ...(o.killSleepS !== undefined ? { killSleepS: o.killSleepS } : {}),
  });
  const rss = new RssSampler(o.pids);
  await rss.sample();
  rss.start(2000);
  const ticker = setInterval(() => {
    const s = Math.round((performance.now() - t0) / 1000);
    if (o.chaos === undefined && goneAfterS === undefined) {
      void (service !== undefined ? Promise.resolve(service.running) : (o.alive?.() ?? Promise.resolve(true))).then(
        (up) => {
          if (!up) goneAfterS ??= s;
        },
      );
    }
    o.progress?.(
      `${s}/${o.seconds} s, ${mix.tally.requests} requests, ${mix.tally.fiveXx} 5xx, ${mix.tally.transportFailures} without answer, ${mix.jobs.size} jobs`,
    );
  }, 2000);
  let chaos: ChaosReport | undefined;
  try {
    const clients = mix.run();
    chaos = o.chaos === undefined ? undefined : await killer(o.chaos, stop, (k) => (kills = k), o.progress);
    await clients;
  } finally {
    clearInterval(ticker);
    rss.stop();
  }
  const wall = (performance.now() - t0) / 1000;
  // The end of the run's last minute (a service that died has no RSS any more: its last
  // sample stands for the end).
  await rss.sample();
  // Chaos: the checks are made against the service as it is after the last restart.
  if (o.chaos !== undefined && !o.chaos.service.running) await o.chaos.service.restart();
  const alive = goneAfterS === undefined && (service?.running ?? true);
  const settleMs = alive ? o.settleS * 1000 : 0;
  o.progress?.('uploading what is still owed');
  const owedUploads = await mix.finishUploads(Date.now() + (alive ? 60_000 : 0));
  o.progress?.('waiting for every job to end');
  const verdict = await verifyJobs(
    o.users.map((u) => u.client),
    mix.jobs,
    o.ledger,
    settleMs,
    (left) => o.progress?.(`waiting for ${left} jobs to end`),
  );
  if (o.cleanAtEnd === true) {
    o.progress?.('cleaning the jobs of the run');
    await cleanJobs(o.users, mix);
  }
  const g = o.chaos === undefined ? growth(rss.samples, o.warmupS) : undefined;
  return {
    clients: o.clients,
    users: o.users.length,
    seconds: Math.round(wall * 10) / 10,
    requests: mix.tally.requests,
    reqPerS: mix.tally.requests / wall,
    latencyMs: summarize(mix.tally.all.values()),
    fiveXx: mix.tally.fiveXx,
    fiveXxText: mix.tally.fiveXxText(),
    transportFailures: mix.tally.transportFailures,
    transportText: mix.tally.transportText(),
    routes: mix.tally.summary(),
    ops: { ...mix.ops },
    abortedUploads: mix.abortedUploads,
    abortedAnswers: { ...mix.abortedAnswers },
    rss: { series: rss.series(), ...(g !== undefined ? { growth: g } : {}) },
    owedUploads,
    verdict,
    ...(chaos !== undefined ? { chaos } : {}),
    crashes: service?.crashes ?? [],
    ...(goneAfterS !== undefined ? { serviceGoneAfterS: goneAfterS } : {}),
  };
}
