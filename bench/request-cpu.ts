/**
 * Server CPU per request, two builds side by side: `action=status` or `action=info`
 * (`--what info`) with N ids (JSON id list), bulk submissions of N trivial jobs (xRSL or ADL) in one POST, and `GET {URL}/rest`
 * (`--what rest`: the versions list, 25 bytes, the per-request overhead of the REST app).
 *
 * Starts one Ceres from each given checkout (its `bin/ceres`, fresh state directory, the
 * per-user limits lifted as in bench:compare) and alternates rounds between them, so the
 * machine's drift falls on both alike. A round is `--calls` requests on one kept-alive
 * connection; the figure is the service's CPU time (utime + stime from /proc/<pid>/stat,
 * 10 ms ticks, hence many calls per round) divided by the calls, and the median over
 * rounds. For submissions the CPU up to the 201 is counted (the engine's work on the new
 * jobs afterwards is waited out, then the jobs are killed, outside the figure) and the
 * client-side time per POST is reported too.
 *
 *   npm run build && node dist/bench/request-cpu.js --a /path/to/old --b . \
 *     [--what status|info|bulk-xrsl|bulk-adl|rest] [--n 1000] [--rounds 7] [--calls 200]
 *
 * `--a`/`--b` are checkout roots with a build in dist/ (`git worktree add ... main` and
 * `npm run build` there gives the old one). `--prof DIR` runs both with `--cpu-prof`.
 *
 * `--floor` (with `--what status`): a third server in the rounds, the raw baseline
 * (bench/raw/static-server.ts) answering every POST with the very bytes `b` answered for
 * the same id list, after reading the request body: what TLS, HTTP and the client cost
 * when the server does no work at all, on the same connection pattern.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { ArcClient, readCredentials } from './harness/client.js';
import { bulkBody } from './harness/job-bodies.js';
import { contentTypeOf } from './scenarios/job-supply.js';
import { parseStat } from './harness/proc.js';
import { BENCH_DEFAULTS, parseServeOutput } from './compare/ceres.js';
import { idListJson } from './harness/job-bodies.js';
import { startRawServer } from './raw/baseline.js';
import { FINAL_STATES } from './harness/answers.js';

interface Service {
  readonly name: string;
  readonly pid: number;
  readonly client: ArcClient;
  /** The service's process (none for the raw baseline, which stops through stopRaw). */
  readonly child: ChildProcess | undefined;
  readonly root: string;
  /** The user's proxy (certificate and key) the client presents. */
  readonly proxy: string;
  ids: string[];
  readonly stopRaw?: () => Promise<void>;
}

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string' },
    what: { type: 'string', default: 'status' },
    n: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '7' },
    calls: { type: 'string', default: '200' },
    prof: { type: 'string' },
    floor: { type: 'boolean', default: false },
  },
});
const what = values.what;
const n = Number(values.n);
const rounds = Number(values.rounds);
const calls = Number(values.calls);

async function ticks(pid: number): Promise<number> {
  const st = parseStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  if (!st) throw new Error(`cannot read /proc/${pid}/stat`);
  return st.ticks;
}

/**
 * Ticks over 300 ms below which a service counts as idle. A sampling profiler (`--prof`)
 * costs a few ticks of its own in that time, which must not read as the engine's work, or
 * every round would wait out the whole limit.
 */
const IDLE_TICKS = values.prof !== undefined ? 12 : 2;

/** Until the service used under IDLE_TICKS ticks over 300 ms (the engine done with the last jobs). */
async function idle(pid: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const t0 = await ticks(pid);
    await sleep(300);
    if ((await ticks(pid)) - t0 < IDLE_TICKS) return;
  }
}

/** Until every pool job is in a final state (two minutes at most). */
async function settled(s: Service): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const { items } = await s.client.action('status', s.ids);
    if (items.every((it) => it.state !== undefined && FINAL_STATES.has(it.state))) return;
    await sleep(1000);
  }
  throw new Error(`${s.name}: the pool's killed jobs did not end within two minutes`);
}

async function start(name: string, checkout: string): Promise<Service> {
  const root = await mkdtemp(join(tmpdir(), `ceres-cpu-${name}-`));
  const config = join(root, 'config.json');
  await writeFile(config, JSON.stringify(BENCH_DEFAULTS));
  const log = await open(join(root, 'ceres.log'), 'a');
  const env = { ...process.env };
  if (values.prof !== undefined)
    env.CERES_NODE_FLAGS = `--cpu-prof --cpu-prof-dir=${resolve(values.prof, name)} --cpu-prof-interval=200`;
  const child = spawn(
    join(resolve(checkout), 'bin/ceres'),
    ['serve', '--listen', '127.0.0.1:0', '--state-dir', join(root, 'state'), '--config', config],
    { stdio: ['ignore', log.fd, log.fd], env },
  );
  await log.close();
  for (let i = 0; i < 1200; i++) {
    const ready = parseServeOutput(await readFile(join(root, 'ceres.log'), 'utf8').catch(() => ''));
    if (ready) {
      const proxy = join(ready.pkiDir, 'userproxy.pem');
      const creds = await readCredentials(proxy, proxy, join(ready.pkiDir, 'ca.pem'));
      const client = new ArcClient(ready.url, creds);
      client.version = '1.1';
      return { name, pid: child.pid ?? 0, client, child, root, proxy, ids: [] };
    }
    await sleep(100);
  }
  throw new Error(`${name} did not start (log in ${root})`);
}

async function stop(s: Service): Promise<void> {
  await s.client.close();
  const child = s.child;
  if (child === undefined) await s.stopRaw?.();
  else {
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
  }
  await rm(s.root, { recursive: true, force: true });
}

/**
 * The raw baseline answering with `b`'s status answer (`--floor`). Its client is made
 * like the services' (the user's proxy, 1 connection); the server asks for no client
 * certificate, so the handshake is lighter, which happens once per connection.
 */
async function startFloor(b: Service): Promise<Service> {
  const root = await mkdtemp(join(tmpdir(), 'ceres-cpu-floor-'));
  const answer = await b.client.request('POST', `${b.client.restBase}/jobs?action=status`, {
    body: idListJson(b.ids),
    contentType: 'application/json',
  });
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`b answered ${answer.status}`);
  await writeFile(join(root, 'answer.json'), answer.body);
  const raw = await startRawServer(root, { type: 'rsa', bits: 2048 }, join(root, 'answer.json'));
  const client = new ArcClient(raw.url, await readCredentials(b.proxy, b.proxy, raw.cacert));
  return {
    name: 'floor',
    pid: raw.pid,
    client,
    child: undefined,
    root,
    proxy: b.proxy,
    ids: b.ids,
    stopRaw: () => raw.stop(),
  };
}

/** One `status` or `rest` call. */
async function one(s: Service): Promise<{ ms: number }> {
  if (s.name === 'floor') {
    const a = await s.client.request('POST', '/file', { body: idListJson(s.ids), contentType: 'application/json' });
    if (a.status !== 200) throw new Error(`floor answered ${a.status}`);
    return a;
  }
  if (what === 'status' || what === 'info') return s.client.action(what, s.ids);
  const a = await s.client.request('GET', `${s.client.servicePath}/rest`);
  if (a.status !== 200) throw new Error(`${s.name}: GET /rest answered ${a.status}`);
  return a;
}

/** One round: CPU ms per call (and client ms per call, median). */
async function round(s: Service, r: number): Promise<{ cpuMs: number; wallMs: number }> {
  const wall: number[] = [];
  if (what === 'status' || what === 'info' || what === 'rest') {
    const t0 = await ticks(s.pid);
    for (let i = 0; i < calls; i++) wall.push((await one(s)).ms);
    return { cpuMs: (((await ticks(s.pid)) - t0) * 10) / calls, wallMs: median(wall) };
  }
  const format = what === 'bulk-adl' ? 'adl' : 'xrsl';
  let cpu = 0;
  const made: string[] = [];
  for (let i = 0; i < calls; i++) {
    const body = bulkBody(format, 'trivial', n, `cpu-${r}-${i}`);
    await idle(s.pid);
    const t0 = await ticks(s.pid);
    const a = await s.client.submit(body, contentTypeOf(format));
    cpu += (await ticks(s.pid)) - t0;
    wall.push(a.ms);
    for (const it of a.items) if (it.id !== undefined && it.status === 201) made.push(it.id);
    if (a.items.length !== n || made.length !== n * (i + 1))
      throw new Error(`${s.name}: POST answered ${a.items.length} items`);
  }
  for (let i = 0; i < made.length; i += 1000) await s.client.action('kill', made.slice(i, i + 1000));
  return { cpuMs: (cpu * 10) / calls, wallMs: median(wall) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

async function main(): Promise<void> {
  if (values.a === undefined || values.b === undefined) throw new Error('--a DIR and --b DIR are required');
  const services = [await start('a', values.a), await start('b', values.b)];
  try {
    if (what === 'status' || what === 'info') {
      for (const s of services) {
        for (let i = 0; i < n; i += 1000) {
          // Jobs killed at submission, as the status and info scenarios use (bench/scenarios/
          // job-supply.ts): the figure is then the call's alone, with no engine work beside it.
          const a = await s.client.submit(bulkBody('xrsl', 'parked', Math.min(1000, n - i), 'pool'));
          const ids = a.items.flatMap((it) => (it.id !== undefined ? [it.id] : []));
          await s.client.action('kill', ids);
          s.ids.push(...ids);
        }
        await settled(s);
        await idle(s.pid);
        for (let i = 0; i < 50; i++) await s.client.action(what, s.ids); // warm-up
      }
      if (values.floor) {
        const f = await startFloor(services[1] as Service);
        services.push(f);
        for (let i = 0; i < 50; i++) await one(f);
      }
    } else if (what === 'rest') {
      // Past the JIT's settling (docs/performance.md, "Open slow spots").
      for (const s of services) for (let i = 0; i < 10_000; i++) await one(s);
    } else {
      for (const s of services) await round(s, -1); // warm-up
    }
    const res: Record<string, { cpu: number[]; wall: number[] }> = {
      a: { cpu: [], wall: [] },
      b: { cpu: [], wall: [] },
      floor: { cpu: [], wall: [] },
    };
    for (let r = 0; r < rounds; r++) {
      for (const s of r % 2 === 0 ? services : [...services].reverse()) {
        await idle(s.pid);
        const x = await round(s, r);
        res[s.name]?.cpu.push(x.cpuMs);
        res[s.name]?.wall.push(x.wallMs);
        process.stderr.write(`round ${r} ${s.name}: cpu ${x.cpuMs.toFixed(3)} ms, client ${x.wallMs.toFixed(3)} ms\n`);
      }
    }
    const A = res.a as { cpu: number[]; wall: number[] };
    const B = res.b as { cpu: number[]; wall: number[] };
    const ca = median(A.cpu),
      cb = median(B.cpu),
      wa = median(A.wall),
      wb = median(B.wall);
    console.log(
      `${what} n=${n}: server CPU per request a ${ca.toFixed(3)} ms, b ${cb.toFixed(3)} ms (b/a ${(cb / ca).toFixed(2)}); ` +
        `client time a ${wa.toFixed(3)} ms, b ${wb.toFixed(3)} ms (b/a ${(wb / wa).toFixed(2)}); ${rounds} rounds of ${calls}`,
    );
    const F = res.floor as { cpu: number[]; wall: number[] };
    if (F.cpu.length > 0)
      console.log(
        `floor (the raw server answering b's bytes): server CPU per request ${median(F.cpu).toFixed(3)} ms, ` +
          `client time ${median(F.wall).toFixed(3)} ms (b/floor ${(wb / median(F.wall)).toFixed(2)})`,
      );
  } finally {
    for (const s of services) await stop(s);
  }
}

await main();
