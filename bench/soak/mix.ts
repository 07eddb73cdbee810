/**
 * The soak mix: N concurrent clients, each one user's kept-alive connection, working in
 * a fixed rotation (so two runs send the same mix) through what a busy site sees:
 *
 *   submit      one ledger job (POST jobs?action=new)
 *   status      action=status for 10 of the client's jobs not yet seen ended, those
 *               asked about least recently first (so every job's end is seen)
 *   upload      a job with an input file, then PUT of the file (every third time an
 *               aborted PUT first: the connection is cut half-way through the body;
 *               a PUT refused with 429 is retried, up to 5 attempts)
 *   info        action=info for one job
 *   download    GET of a finished job's stdout, or the session listing of another
 *   versions    GET /rest
 *   kill        a sleeping job, then action=kill on it
 *   list        GET jobs
 *   clean       action=clean on up to 10 of the client's jobs seen in a final state
 *               (not FAILED ones: the checks at the end want their reasons)
 *
 * Each client keeps every job it submitted until it has cleaned it, and holds at most
 * MAX_OPEN jobs not yet seen ended (a submitting op asks for their status instead), as
 * a production client does (aCT's and DIRAC's caps on jobs queued at a site). So the
 * jobs stored stay level instead of growing with the run, and the memory measured is
 * the service's own, not a growing store or backlog. (An earlier mix asked only about a
 * client's newest jobs, forgot older ones unseen and submitted without a cap: on a slow
 * machine a 10-minute run ended with ~17,000 jobs stored and ~8,000 not yet ended.)
 *
 * Every answer is tallied by route and status; a request that gets no HTTP answer is
 * a transport failure (during chaos, the service being down), after which the client
 * backs off briefly instead of spinning. Every job acknowledged with 201 is recorded
 * (owner, token, kind) for the checks at the end (verify.ts).
 */
import { request as httpsRequest } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ArcClient, Credentials } from '../harness/client.js';
import { FINAL_STATES, parseBulk } from '../harness/answers.js';
import { idListJson } from '../harness/job-bodies.js';
import { soakJob, type Ledger } from './ledger.js';
import { Tally } from './tally.js';

export interface MixUser {
  readonly name: string;
  /** A pool with enough connections for the clients of this user. */
  readonly client: ArcClient;
  /** For the aborted uploads, which go over a raw socket the harness can cut. */
  readonly creds: Credentials;
}

export type JobKind = 'quick' | 'upload' | 'kill';

export interface SoakJob {
  readonly id: string;
  readonly user: number;
  readonly token: string;
  readonly kind: JobKind;
  /** Last state a status answer gave. */
  state?: string;
  cleaned: boolean;
  /**
   * A clean was sent and got no answer (the service was killed meanwhile): it may have
   * been carried out, so the job's absence later is no loss.
   */
  cleanUnanswered?: boolean;
  /** Upload jobs: whether the input file was stored (2xx). */
  uploaded: boolean;
  /** When a status request last asked about it (a counter; 0 = never). */
  asked: number;
}

export interface MixOptions {
  readonly users: readonly MixUser[];
  readonly clients: number;
  readonly ledger: Ledger;
  /** True once the clients are to stop (checked between requests). */
  readonly stop: () => boolean;
  /** Bytes of each upload (default 64 KiB). */
  readonly uploadBytes?: number;
  /** Seconds the kill jobs sleep, so the kill finds them alive (default 30). */
  readonly killSleepS?: number;
  /** Prefix of the tokens (unique per run). */
  readonly runId: string;
}

/**
 * Which of a client's jobs (`mine`, oldest first) a status request asks about: those not
 * yet seen ended, asked about least recently first (the newest among equals), at most
 * `n`; each is marked asked at `now`. Every open job is asked about within a few rounds,
 * however many there are, so none ends unseen (and uncleaned).
 */
export function jobsToAsk(
  mine: readonly string[],
  jobs: ReadonlyMap<string, SoakJob>,
  n: number,
  now: number,
): string[] {
  const open = mine
    .map((id) => jobs.get(id))
    .filter((j): j is SoakJob => j !== undefined && !FINAL_STATES.has(j.state ?? ''));
  const ask = open
    .map((j, i) => ({ j, i }))
    .sort((x, y) => x.j.asked - y.j.asked || y.i - x.i)
    .slice(0, n)
    .map(({ j }) => j);
  for (const j of ask) j.asked = now;
  return ask.map((j) => j.id);
}

/** Ended and not FAILED: what a client cleans. */
function cleanable(state: string | undefined): boolean {
  return state !== 'FAILED' && FINAL_STATES.has(state ?? '');
}

const OPS = ['submit', 'status', 'upload', 'info', 'download', 'versions', 'kill', 'list', 'status', 'clean'] as const;
type Op = (typeof OPS)[number];
const SUBMITTING: ReadonlySet<Op> = new Set(['submit', 'upload', 'kill']);

/** Ids per status and per clean request. */
const PER_REQUEST = 10;

/** Attempts at a job's upload while the service answers 429. */
const UPLOAD_ATTEMPTS = 5;

/** The pause before retrying a 429: its Retry-After (seconds, at most 2 s), else 200-500 ms. */
export function retryPauseMs(retryAfter: string | string[] | undefined): number {
  const s = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  if (Number.isFinite(s) && s >= 0) return Math.min(2000, s * 1000);
  return 200 + Math.floor(Math.random() * 300);
}

/** Jobs a client holds not yet seen ended; past it, a submitting op asks for their status. */
const MAX_OPEN = 40;

export class Mix {
  readonly tally = new Tally();
  readonly jobs = new Map<string, SoakJob>();
  abortedUploads = 0;
  /** Aborted uploads the service answered before the cut (status -> count). */
  readonly abortedAnswers: Record<string, number> = {};
  readonly ops: Record<string, number> = {};
  #uploads = 0;
  #asks = 0;

  constructor(readonly o: MixOptions) {}

  /** Runs the clients until `stop()`; resolves when every client has finished its last request. */
  async run(): Promise<void> {
    await Promise.all(Array.from({ length: this.o.clients }, (_, w) => this.#client(w)));
  }

  async #client(w: number): Promise<void> {
    const userIndex = w % this.o.users.length;
    const user = this.o.users[userIndex] as MixUser;
    const mine: string[] = [];
    for (let i = 0; !this.o.stop(); i++) {
      let op = OPS[(w + i) % OPS.length] as Op;
      if (SUBMITTING.has(op) && this.#open(mine) >= MAX_OPEN) op = 'status';
      this.ops[op] = (this.ops[op] ?? 0) + 1;
      const ok = await this.#step(op, user, userIndex, mine, `${this.o.runId}w${w}i${i}`);
      // No answer (the service is down or restarting): do not spin on refused connections.
      if (!ok) await sleep(100 + Math.floor(Math.random() * 200));
    }
  }

  /** One request (or a short sequence); false when one of them got no HTTP answer. */
  async #step(op: Op, u: MixUser, userIndex: number, mine: string[], token: string): Promise<boolean> {
    const c = u.client;
    switch (op) {
      case 'submit': {
        const id = await this.#submit(u, userIndex, token, 'quick', mine);
        return id !== null;
      }
      case 'upload': {
        const id = await this.#submit(u, userIndex, token, 'upload', mine);
        if (id === null) return false;
        if (id === undefined) return true;
        if (++this.#uploads % 3 === 0) await this.#abortedPut(u, id);
        return this.#upload(u, id);
      }
      case 'kill': {
        const id = await this.#submit(u, userIndex, token, 'kill', mine);
        if (id === null) return false;
        if (id === undefined) return true;
        return this.#bulk(c, 'kill', [id]);
      }
      case 'status': {
        const ask = this.#toAsk(mine);
        return ask.length === 0 ? true : this.#bulk(c, 'status', ask);
      }
      case 'info':
        return mine.length === 0 ? true : this.#bulk(c, 'info', mine.slice(-1));
      case 'clean': {
        // A FAILED job is kept: the checks at the end read its reason (verify.ts).
        const ended = mine.filter((id) => cleanable(this.jobs.get(id)?.state)).slice(0, PER_REQUEST);
        if (ended.length === 0) return true;
        const ok = await this.#bulk(c, 'clean', ended);
        const gone = new Set(ended.filter((id) => this.jobs.get(id)?.cleaned));
        if (gone.size > 0) mine.splice(0, mine.length, ...mine.filter((id) => !gone.has(id)));
        return ok;
      }
      case 'download': {
        const done = mine.find((id) => this.jobs.get(id)?.state === 'FINISHED');
        if (done !== undefined)
          return (
            (await this.#call(c, 'GET session/<file>', 'GET', `${c.restBase}/jobs/${done}/session/out`)) !== undefined
          );
        const any = mine[mine.length - 1];
        if (any === undefined) return true;
        return (await this.#call(c, 'GET session', 'GET', `${c.restBase}/jobs/${any}/session`)) !== undefined;
      }
      case 'versions':
        return (await this.#call(c, 'GET rest', 'GET', `${c.servicePath}/rest`)) !== undefined;
      case 'list':
        return (await this.#call(c, 'GET jobs', 'GET', `${c.restBase}/jobs`, { discardBody: true })) !== undefined;
    }
  }

  /** One request, tallied; undefined when no HTTP answer came. */
  async #call(
    c: ArcClient,
    route: string,
    method: string,
    path: string,
    o: { body?: string | Buffer; contentType?: string; discardBody?: boolean } = {},
  ) {
    try {
      const a = await c.request(method, path, o);
      this.tally.answer(route, a.status, a.ms, a.body);
      return a;
    } catch (e) {
      this.tally.transport(route, e);
      return undefined;
    }
  }

  /** Submits one job; its id, undefined when refused with an HTTP answer, null without one. */
  async #submit(
    u: MixUser,
    userIndex: number,
    token: string,
    kind: JobKind,
    mine: string[],
  ): Promise<string | undefined | null> {
    const c = u.client;
    const body = soakJob(this.o.ledger, token, kind === 'kill' ? (this.o.killSleepS ?? 30) : 0, kind === 'upload');
    const a = await this.#call(c, 'POST jobs?action=new', 'POST', `${c.restBase}/jobs?action=new`, {
      body,
      contentType: 'application/rsl',
    });
    if (a === undefined) return null;
    if (a.status !== 201) return undefined;
    let id: string | undefined;
    try {
      for (const it of parseBulk(a.body.toString('utf8'))) {
        this.tally.item('POST jobs?action=new', it.status, it.reason);
        if (it.status === 201 && it.id !== undefined) id = it.id;
      }
    } catch {
      this.tally.item('POST jobs?action=new', 0, 'answer is not JSON');
    }
    if (id === undefined) return undefined;
    this.jobs.set(id, { id, user: userIndex, token, kind, cleaned: false, uploaded: false, asked: 0 });
    mine.push(id);
    return id;
  }

  /** How many of the client's jobs it has not yet seen end. */
  #open(mine: readonly string[]): number {
    let n = 0;
    for (const id of mine) if (!FINAL_STATES.has(this.jobs.get(id)?.state ?? '')) n++;
    return n;
  }

  #toAsk(mine: readonly string[]): string[] {
    return jobsToAsk(mine, this.jobs, PER_REQUEST, ++this.#asks);
  }

  /** POST jobs?action=X; records states (status) and cleans. False without an HTTP answer. */
  async #bulk(c: ArcClient, action: string, ids: readonly string[]): Promise<boolean> {
    const route = `POST jobs?action=${action}`;
    const a = await this.#call(c, route, 'POST', `${c.restBase}/jobs?action=${action}`, {
      body: idListJson(ids),
      contentType: 'application/json',
    });
    if (a === undefined) {
      if (action === 'clean') for (const id of ids) Object.assign(this.jobs.get(id) ?? {}, { cleanUnanswered: true });
      return false;
    }
    if (a.status < 200 || a.status > 299) return true;
    try {
      for (const it of parseBulk(a.body.toString('utf8'))) {
        this.tally.item(route, it.status, it.reason);
        const j = it.id === undefined ? undefined : this.jobs.get(it.id);
        if (j === undefined) continue;
        if (action === 'status' && it.state !== undefined) j.state = it.state;
        if (action === 'clean' && it.status >= 200 && it.status < 300) j.cleaned = true;
      }
    } catch {
      this.tally.item(route, 0, 'answer is not JSON');
    }
    return true;
  }

  /**
   * The PUT of a job's input file, retried when the service refused it for now (429, the
   * per-identity cap on requests in progress) after the Retry-After it gave (at most 2 s)
   * or a short random pause, as a real client does. Without the retry a refused upload was
   * made only after the run, and its job waited in PREPARING for the whole 600 s allowed
   * for it: under the soak such jobs accumulated through the run (32 -> 232).
   */
  async #upload(u: MixUser, id: string): Promise<boolean> {
    const c = u.client;
    for (let attempt = 1; ; attempt++) {
      const a = await this.#call(c, 'PUT session/<file>', 'PUT', `${c.restBase}/jobs/${id}/session/in.dat`, {
        body: Buffer.alloc(this.o.uploadBytes ?? 65_536, 0x62),
        contentType: 'application/octet-stream',
      });
      if (a === undefined) return false;
      const j = this.jobs.get(id);
      if (j !== undefined && a.status >= 200 && a.status < 300) j.uploaded = true;
      if (a.status !== 429 || attempt >= UPLOAD_ATTEMPTS || this.o.stop()) return true;
      await sleep(retryPauseMs(a.headers['retry-after']));
    }
  }

  /**
   * A PUT announcing the whole file whose connection is cut after a quarter of it: what
   * a client that crashes or loses its network mid-upload leaves behind. Nothing is to
   * be answered; an answer that came before the cut is tallied.
   */
  async #abortedPut(u: MixUser, id: string): Promise<void> {
    this.abortedUploads++;
    const total = this.o.uploadBytes ?? 65_536;
    const origin = new URL(u.client.origin);
    const status = await new Promise<number | undefined>((resolve) => {
      let settled = false;
      const done = (s: number | undefined): void => {
        if (!settled) {
          settled = true;
          resolve(s);
        }
      };
      const req = httpsRequest({
        host: origin.hostname,
        port: origin.port,
        method: 'PUT',
        path: `${u.client.restBase}/jobs/${id}/session/in.dat`,
        cert: u.creds.cert,
        key: u.creds.key,
        ca: u.creds.ca,
        agent: false,
        headers: { 'content-length': String(total), 'content-type': 'application/octet-stream' },
      });
      req.on('response', (res) => {
        res.resume();
        done(res.statusCode);
      });
      req.on('error', () => done(undefined));
      req.write(Buffer.alloc(Math.max(1, total >> 2), 0x61), () => {
        // Long enough for the service to have started writing the file.
        setTimeout(() => {
          req.destroy();
          done(undefined);
        }, 20);
      });
      setTimeout(() => {
        req.destroy();
        done(undefined);
      }, 30_000).unref();
    });
    if (status !== undefined) {
      this.abortedAnswers[String(status)] = (this.abortedAnswers[String(status)] ?? 0) + 1;
      if (status >= 500) this.tally.answer('PUT session/<file> (aborted)', status, 0);
    }
  }

  /**
   * After the clients stopped: upload jobs still waiting for their file get it now (a
   * retry, as a client would), and those that cannot are killed, so every job can end.
   */
  async finishUploads(
    deadline: number,
  ): Promise<{ uploaded: number; killed: number; answers: Record<string, number> }> {
    let uploaded = 0;
    let killed = 0;
    const before = new Map(this.tally.summary().map((r) => [r.route, r.statuses]));
    for (const j of this.jobs.values()) {
      if (j.kind !== 'upload' || j.uploaded || j.cleaned) continue;
      const u = this.o.users[j.user] as MixUser;
      while (!j.uploaded && Date.now() < deadline) {
        const ok = await this.#upload(u, j.id);
        if (ok && !j.uploaded) break;
        if (!ok) await sleep(200);
      }
      if (j.uploaded) uploaded++;
      else if (await this.#bulk(u.client, 'kill', [j.id])) killed++;
    }
    // What the retried PUTs and the kills were answered (the tally since the clients stopped).
    const answers: Record<string, number> = {};
    for (const r of this.tally.summary()) {
      if (r.route !== 'PUT session/<file>' && !r.route.startsWith('POST jobs?action=kill')) continue;
      for (const [s, n] of Object.entries(r.statuses)) {
        const d = n - (before.get(r.route)?.[s] ?? 0);
        if (d > 0) answers[`${r.route} ${s}`] = d;
      }
    }
    return { uploaded, killed, answers };
  }
}
