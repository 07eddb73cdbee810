/**
 * One gfal2 helper process (helper-script.ts) and the requests a job's transfers send it.
 * It runs as the job's account (or the service's when the job has none), so what it
 * reads and writes it could reach anyway; the job's credential is handed over in a file
 * only that account can read (X509_USER_PROXY) or in the environment (BEARER_TOKEN),
 * never on the command line.
 *
 * Every request has a deadline: past it the process is killed (a stalled server never
 * hangs a job) and the next request starts a new one. xrootd's own connection retries
 * (minutes by default) are cut to the connect timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Credential } from '../credentials.js';
import type { SessionOwner } from '../../fs/session-owner.js';
import { stagingError } from '../staging-error.js';
import { gfal2Error } from './classify.js';
import { HELPER_SCRIPT } from './helper-script.js';
import { GFAL2_PYTHON } from './probe.js';
import type { S3Keys } from './s3-endpoints.js';

export interface HelperOptions {
  /** The account the helper runs as; undefined: the service's. */
  readonly owner: SessionOwner | undefined;
  readonly credential: Credential | undefined;
  readonly connectSeconds: number;
  readonly idleSeconds: number;
  /** Requests the helper serves at once (threads sharing one gfal2 context). */
  readonly workers: number;
  /** An S3 endpoint's keys: only for a helper of the service's account (`owner` undefined). */
  readonly s3?: S3Keys;
  /** Trusted CA directory for GSI and https (X509_CERT_DIR). */
  readonly certDir?: string;
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
  readonly #pending = new Map<number, Pending>();

  constructor(private readonly o: HelperOptions) {}

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
    const env: Record<string, string> = {
      PATH: '/usr/bin:/bin',
      HOME: work,
      // A dead server costs the connect timeout, not xrootd's default of minutes.
      XRD_CONNECTIONRETRY: '1',
      XRD_CONNECTIONWINDOW: String(Math.ceil(this.o.connectSeconds)),
      XRD_REQUESTTIMEOUT: String(Math.ceil(this.o.idleSeconds)),
      XRD_STREAMTIMEOUT: String(Math.ceil(this.o.idleSeconds)),
      XRD_TIMEOUTRESOLUTION: '1',
      CERES_GFAL2_WORKERS: String(this.o.workers),
      X509_CERT_DIR: this.o.certDir ?? process.env['X509_CERT_DIR'] ?? '/etc/grid-security/certificates',
    };
    const c = this.o.credential;
    if (c?.kind === 'x509') {
      const path = join(work, 'proxy.pem');
      await writeFile(path, `${c.certChainPem.trim()}\n${c.keyPem.trim()}\n`, { mode: 0o600 });
      if (this.o.owner !== undefined) await chown(path, this.o.owner.uid, this.o.owner.gid);
      env['X509_USER_PROXY'] = path;
    } else if (c?.kind === 'jwt') env['BEARER_TOKEN'] = c.token;
    // The site's keys never go to a process of the job's account, which the job could read.
    if (this.o.s3 !== undefined && this.o.owner === undefined) env['CERES_GFAL2_S3'] = JSON.stringify(this.o.s3);
    const proc = spawn(GFAL2_PYTHON, ['-c', HELPER_SCRIPT], {
      env,
      cwd: work,
      stdio: ['pipe', 'pipe', 'ignore'],
      ...(this.o.owner === undefined ? {} : { uid: this.o.owner.uid, gid: this.o.owner.gid }),
    });
    const lines = createInterface({ input: proc.stdout });
    lines.on('line', (line) => this.#onLine(line));
    const gone = (): void => {
      if (this.#generation === generation) this.#proc = undefined;
      for (const p of this.#pending.values())
        p.reject(stagingError('CE_ERR_STAGING_NETWORK', 'transfer helper ended', { transient: true }));
      this.#pending.clear();
    };
    proc.on('exit', gone);
    proc.on('error', gone);
    proc.stdin?.on('error', () => undefined);
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
