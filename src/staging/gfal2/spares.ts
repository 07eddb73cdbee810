/**
 * Warm gfal2 helpers: processes started ahead, by the service's account, that have loaded
 * Python, gfal2 and its plugins and wait for their bind (helper-script.ts). A job's first
 * gfal2 transfer takes one (helper.ts binds it to that job's account and credential)
 * instead of paying the start, and a new spare is started in the background for the
 * next job. A spare is handed out once: a bound helper is never returned here, it ends
 * with its job (Gfal2Pool.close), so nothing of one job can reach another.
 *
 * What a spare holds: the service's settings (XRD_* timeouts, X509_CERT_DIR, PATH), no
 * credential, no job folder (its working directory is /). It talks to nobody but the
 * service, over the pipes of its stdin and stdout; it runs as the service's account, so
 * no job's account can ptrace it or read its /proc files.
 *
 * Spares are started on the first use, not with the service: a site that never stages
 * over a grid protocol runs no Python. They end when the stager closes, or when the
 * service does (a spare's stdin ends with the service, and it exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { HELPER_SCRIPT } from './helper-script.js';
import { GFAL2_PYTHON } from './probe.js';

/** What every helper of the service shares: its settings, fixed before any job is known. */
export interface HelperSettings {
  readonly connectSeconds: number;
  readonly idleSeconds: number;
  /** Trusted CA directory for GSI and https (X509_CERT_DIR). */
  readonly certDir?: string;
}

/** A started helper process and its output lines, not bound yet. */
export interface HelperProcess {
  readonly proc: ChildProcess;
  readonly lines: Interface;
  /** Settled once the helper has loaded gfal2 (its first line) or ended. */
  readonly loaded: Promise<void>;
}

export function spawnHelper(s: HelperSettings): HelperProcess {
  const env: Record<string, string> = {
    PATH: '/usr/bin:/bin',
    HOME: '/',
    // A dead server costs the connect timeout, not xrootd's default of minutes.
    XRD_CONNECTIONRETRY: '1',
    XRD_CONNECTIONWINDOW: String(Math.ceil(s.connectSeconds)),
    XRD_REQUESTTIMEOUT: String(Math.ceil(s.idleSeconds)),
    XRD_STREAMTIMEOUT: String(Math.ceil(s.idleSeconds)),
    XRD_TIMEOUTRESOLUTION: '1',
    X509_CERT_DIR: s.certDir ?? process.env['X509_CERT_DIR'] ?? '/etc/grid-security/certificates',
  };
  const proc = spawn(GFAL2_PYTHON, ['-c', HELPER_SCRIPT], { env, cwd: '/', stdio: ['pipe', 'pipe', 'ignore'] });
  proc.stdin?.on('error', () => undefined);
  proc.on('error', () => undefined);
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const loaded = new Promise<void>((resolve) => {
    lines.once('line', () => resolve());
    proc.once('exit', () => resolve());
  });
  return { proc, lines, loaded };
}

function alive(h: HelperProcess): boolean {
  return h.proc.exitCode === null && h.proc.signalCode === null && h.proc.pid !== undefined;
}

/** Keeps up to `count` idle spares (0: none; every job starts its own helper). */
export class Gfal2Spares {
  readonly #idle: HelperProcess[] = [];
  #closed = false;

  constructor(
    private readonly settings: HelperSettings,
    private readonly count: number,
  ) {}

  /**
   * A helper for one job, to be bound by the caller: a spare if one is alive (`spare`
   * true), else one started now. The caller calls refill(): after the bind when there
   * was no spare (jobs stage at once: the next may come before this one ends), else
   * when its job's transfers end, so that the next spare's start (Python, gfal2 and its
   * plugins: about as much CPU as a hundred small copies) does not compete with them.
   */
  take(): HelperProcess & { spare: boolean } {
    let h: HelperProcess | undefined;
    while ((h = this.#idle.shift()) !== undefined && !alive(h));
    if (h === undefined) return { ...spawnHelper(this.settings), spare: false };
    // A bound helper keeps the service running while its job's transfers do.
    h.proc.ref();
    for (const s of [h.proc.stdin, h.proc.stdout]) (s as { ref?: () => void } | null)?.ref?.();
    return { ...h, spare: true };
  }

  /** Idle spares' process ids (metrics, tests). */
  get idlePids(): number[] {
    return this.#idle.filter(alive).map((h) => h.proc.pid as number);
  }

  /** Settled once every idle spare has loaded gfal2 (the benchmark waits, so a start does not land in its baseline). */
  async loaded(): Promise<void> {
    // Idle spares do not keep the process running (refill): this wait does.
    const keep = setInterval(() => undefined, 1000);
    try {
      await Promise.all(this.#idle.map((h) => h.loaded));
    } finally {
      clearInterval(keep);
    }
  }

  /** Starts spares up to the count, in the background. */
  refill(): void {
    if (this.#closed) return;
    while (this.#idle.length < this.count) {
      const h = spawnHelper(this.settings);
      // An idle spare does not keep the service (or a test) from exiting; its stdin
      // ends then, and so does the spare.
      h.proc.unref();
      for (const s of [h.proc.stdin, h.proc.stdout]) (s as { unref?: () => void } | null)?.unref?.();
      h.proc.once('exit', () => {
        const i = this.#idle.indexOf(h);
        if (i >= 0) this.#idle.splice(i, 1);
      });
      this.#idle.push(h);
    }
  }

  /** Ends the idle spares and starts no more. */
  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle.splice(0);
    await Promise.all(
      idle.filter(alive).map(
        (h) =>
          new Promise<void>((resolve) => {
            h.proc.once('exit', () => resolve());
            h.proc.ref(); // the stager's close waits for the exit
            h.proc.stdin?.end();
            const t = setTimeout(() => h.proc.kill('SIGKILL'), 5000);
            t.unref();
          }),
      ),
    );
  }
}
