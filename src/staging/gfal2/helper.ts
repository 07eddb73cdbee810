/**
 * One job's gfal2 helper process (helper-script.ts) and the requests its transfers send.
 * The process is a warm spare (spares.ts) or one started now, bound on its first use to
 * the job's account (or the service's when the job has none), so what it reads and
 * writes it could reach anyway. The job's credential is handed over only in the bind,
 * after the switch to that account: a proxy in a file only that account can read (its
 * path only), a token or an S3 endpoint's keys in the line itself; never on the command
 * line or in the process's initial environment.
 *
 * Every request has a deadline: past it the process is killed (a stalled server never
 * hangs a job) and the next request binds a new one. xrootd's own connection retries
 * (minutes by default) are cut to the connect timeout (spares.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants as C } from 'node:fs';
import { chown, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Credential } from '../credentials.js';
import type { SessionOwner } from '../../fs/session-owner.js';
import { stagingError } from '../staging-error.js';
import { gfal2Error } from './classify.js';
import type { S3Keys } from './s3-endpoints.js';
import type { Gfal2Spares } from './spares.js';

export interface HelperOptions {
  /** The account the helper runs as; undefined: the service's. */
  readonly owner: SessionOwner | undefined;
  readonly credential: Credential | undefined;
  /** Requests the helper serves at once (threads sharing one gfal2 context). */
  readonly workers: number;
  /** An S3 endpoint's keys: only for a helper of the service's account (`owner` undefined). */
  readonly s3?: S3Keys;
  /** Where the process comes from: a warm spare or one started now. */
  readonly spares: Gfal2Spares;
}

interface Pending {
  resolve: (r: Record<string, unknown>) => void;
  reject: (e: Error) => void;
  onProgress?: (bytes: number) => void;
}

export class Gfal2Helper {
  /**
   * The process being started or running, and the folder: promises, so the transfers
   * of a job that start at once share one of each (the start awaits file writes, and
   * checking a plain field before them let each start a process and folder of its own,
   * all but the last never ended nor removed).
   */
  #proc: Promise<ChildProcess> | undefined;
  #work: Promise<string> | undefined;
  /** Which start #proc is: a process that ends clears #proc only if it is still the current one. */
  #generation = 0;
  #next = 0;
  /** The process was a spare: its replacement starts at close (spares.ts, take). */
  #tookSpare = false;
  /** Names of the files of this helper's folder: one random tag per helper, then a count (fileName). */
  readonly #tag = randomBytes(6).toString('hex');
  #files = 0;
  readonly #pending = new Map<number, Pending>();
  /**
   * This helper's downloads so far (the job's, with this credential): how many were
   * answered and the most bytes one had or reported. Kept by gfal2Download, which
   * predicts from it which end-to-end check a download of unknown size gets.
   */
  readonly downloads = { answered: 0, largest: 0 };

  constructor(private readonly o: HelperOptions) {}

  /** The helper runs as the service's own account (no job account): its folder is the service's alone. */
  get asService(): boolean {
    return this.o.owner === undefined;
  }

  /**
   * A new name for a file of this helper's folder (`in-<tag>-<n>`). Not a secret: the
   * folder's account can list it anyway. What keeps a name it plants from being followed
   * is how each side opens it (the helper's copy is moved by one rename, which moves a
   * link itself, and looked at without following links; an upload's copy is created
   * anew, O_EXCL). A count where a random name per file was drawn before: one call into
   * the system's random source less per file.
   */
  fileName(kind: 'in' | 'out'): string {
    return `${kind}-${this.#tag}-${++this.#files}`;
  }

  /** A folder of the helper's account, 0700, for downloads to land in before the service moves them. */
  workDir(): Promise<string> {
    this.#work ??= (async () => {
      const dir = await mkdtemp(join(tmpdir(), 'ceres-gfal2-'));
      if (this.o.owner !== undefined) await chown(dir, this.o.owner.uid, this.o.owner.gid);
      return dir;
    })();
    return this.#work;
  }

  #start(): Promise<ChildProcess> {
    if (this.#proc === undefined) {
      const generation = ++this.#generation;
      this.#proc = this.#spawn(generation).catch((e: unknown) => {
        if (this.#generation === generation) this.#proc = undefined; // the next request tries again
        throw e;
      });
    }
    return this.#proc;
  }

  async #spawn(generation: number): Promise<ChildProcess> {
    const work = await this.workDir();
    const bind: Record<string, unknown> = { op: 'bind', work, workers: this.o.workers };
    if (this.o.owner !== undefined) Object.assign(bind, { uid: this.o.owner.uid, gid: this.o.owner.gid });
    const c = this.o.credential;
    if (c?.kind === 'x509') {
      // A new name each time, created only if absent and given through its descriptor:
      // the folder is the job account's, which could plant a link at a known name.
      const path = join(work, `proxy-${generation}.pem`);
      const fh = await open(path, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
      try {
        if (this.o.owner !== undefined) await fh.chown(this.o.owner.uid, this.o.owner.gid);
        await fh.writeFile(`${c.certChainPem.trim()}\n${c.keyPem.trim()}\n`);
      } finally {
        await fh.close();
      }
      bind['proxy'] = path;
    } else if (c?.kind === 'jwt') bind['token'] = c.token;
    // The site's keys never go to a process of the job's account, which the job could read.
    if (this.o.s3 !== undefined && this.o.owner === undefined) bind['s3'] = this.o.s3;
    const { proc, lines, spare } = this.o.spares.take();
    this.#tookSpare ||= spare;
    // Settled by the bind's answer, or by the process ending first (a spare that died
    // idle: transient, the retry binds another).
    let bound: ((ok: boolean, message: string | undefined) => void) | undefined;
    const answered = new Promise<void>((resolve, reject) => {
      bound = (ok, message) => {
        bound = undefined;
        if (ok) resolve();
        else if (message === undefined)
          reject(stagingError('CE_ERR_STAGING_NETWORK', 'transfer helper ended', { transient: true }));
        else
          reject(
            stagingError('CE_ERR_STAGING_LOCAL_IO', `the transfer helper could not take the job's account: ${message}`),
          );
      };
    });
    lines.on('line', (line) => {
      if (bound === undefined) return this.#onLine(line);
      let msg: Record<string, unknown> | undefined;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        msg = undefined;
      }
      if (typeof msg?.['bound'] === 'boolean')
        bound(msg['bound'], typeof msg['message'] === 'string' ? msg['message'] : 'no reason given');
    });
    const gone = (): void => {
      if (this.#generation === generation) this.#proc = undefined;
      bound?.(false, undefined);
      for (const p of this.#pending.values())
        p.reject(stagingError('CE_ERR_STAGING_NETWORK', 'transfer helper ended', { transient: true }));
      this.#pending.clear();
    };
    // A spare that ended before it was taken: no exit event comes any more.
    if (proc.exitCode !== null || proc.signalCode !== null) gone();
    proc.on('exit', gone);
    proc.on('error', gone);
    proc.stdin?.write(`${JSON.stringify(bind)}\n`);
    try {
      await answered;
    } catch (e) {
      proc.kill('SIGKILL');
      throw e;
    } finally {
      if (!spare) this.o.spares.refill(); // a spare taken is replaced when this job's transfers end (close)
    }
    return proc;
  }

  #onLine(line: string): void {
    let msg: Record<string, unknown>;
    try {
      msg = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const p = this.#pending.get(Number(msg['id']));
    if (p === undefined) return;
    if (typeof msg['progress'] === 'number') {
      p.onProgress?.(msg['progress']);
      return;
    }
    this.#pending.delete(Number(msg['id']));
    if (msg['ok'] === true) p.resolve(msg);
    else p.reject(gfal2Error(Number(msg['errno']), typeof msg['message'] === 'string' ? msg['message'] : ''));
  }

  /**
   * Sends one request and waits for its answer, at most `timeoutMs` (then the helper is
   * killed: gfal2 has no reliable way to abort a copy from outside) or until `signal`.
   */
  async request(
    req: Record<string, unknown>,
    timeoutMs: number,
    signal: AbortSignal,
    onProgress?: (bytes: number) => void,
  ): Promise<Record<string, unknown>> {
    const proc = await this.#start();
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      };
      const kill = (e: Error): void => {
        this.#pending.delete(id);
        done();
        proc.kill('SIGKILL');
        reject(e);
      };
      const timer = setTimeout(
        () =>
          kill(
            stagingError('CE_ERR_STAGING_TIMEOUT', `no result within ${Math.round(timeoutMs / 1000)} s`, {
              transient: true,
            }),
          ),
        timeoutMs,
      );
      const onAbort = (): void => kill(stagingError('CE_ERR_STAGING_CANCELLED', 'cancelled'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(id, {
        resolve: (r) => {
          done();
          resolve(r);
        },
        reject: (e) => {
          done();
          reject(e);
        },
        ...(onProgress === undefined ? {} : { onProgress }),
      });
      proc.stdin?.write(`${JSON.stringify({ ...req, id })}\n`);
    });
  }

  /** Ends the process and removes its folder (with the credential copy). */
  async close(): Promise<void> {
    const proc = await this.#proc?.catch(() => undefined);
    this.#proc = undefined;
    this.#generation++;
    if (this.#tookSpare) this.o.spares.refill();
    this.#tookSpare = false;
    if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.stdin?.end();
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
    const work = await this.#work?.catch(() => undefined);
    this.#work = undefined;
    if (work !== undefined) await rm(work, { recursive: true, force: true });
  }
}
