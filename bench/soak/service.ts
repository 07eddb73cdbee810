/**
 * A Ceres under test that the harness can kill and start again: one state directory
 * and one port for its whole life (the first start picks a free port, the restarts
 * listen on it again, so the clients keep their URL), output appended to one log
 * file. Every exit is recorded; one the harness did not cause (a crash: exit code,
 * signal) is the evidence a soak or chaos report needs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseServeOutput } from '../compare/ceres.js';
import { ceresCommand } from '../harness/launcher.js';

export interface ServiceExit {
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** True when the harness killed it (SIGKILL for chaos, SIGTERM at the end). */
  readonly expected: boolean;
  readonly at: string;
  /** Last lines of the log when it exited unexpectedly. */
  readonly logTail?: string;
}

export class CeresService {
  readonly exits: ServiceExit[] = [];
  url = '';
  pkiDir = '';
  starts = 0;
  #child: ChildProcess | undefined;
  #port = 0;
  #expecting = false;

  private constructor(
    readonly root: string,
    readonly logPath: string,
    readonly configPath: string,
  ) {}

  /** Starts a Ceres with its state in `root/state` and `config` as its configuration. */
  static async start(root: string, config: Record<string, unknown> = {}): Promise<CeresService> {
    await mkdir(root, { recursive: true });
    const configPath = join(root, 'config.json');
    await writeFile(configPath, JSON.stringify({ log: { level: 'warn' }, ...config }));
    const s = new CeresService(root, join(root, 'ceres.log'), configPath);
    await s.restart();
    return s;
  }

  get pid(): number | undefined {
    return this.#child?.exitCode === null && this.#child.signalCode === null ? this.#child.pid : undefined;
  }

  get running(): boolean {
    return this.pid !== undefined;
  }

  /** Exits the harness did not cause. */
  get crashes(): ServiceExit[] {
    return this.exits.filter((e) => !e.expected);
  }

  /** Starts the service (again), on the same port after the first start; resolves when it is ready. */
  async restart(timeoutS = 120): Promise<void> {
    if (this.running) throw new Error('the service is still running');
    const ceres = ceresCommand();
    const from = await stat(this.logPath).then(
      (s) => s.size,
      () => 0,
    );
    const log = await open(this.logPath, 'a');
    const listen = `127.0.0.1:${this.#port}`;
    // As `npm start` runs it (docs/operations.md).
    const args = [
      ...ceres.args,
      'serve',
      '--listen',
      listen,
      '--state-dir',
      join(this.root, 'state'),
      '--config',
      this.configPath,
    ];
    const child = spawn(ceres.file, args, { stdio: ['ignore', log.fd, log.fd] });
    await log.close();
    this.#child = child;
    this.#expecting = false;
    this.starts++;
    child.once('exit', (code, signal) => {
      const expected = this.#expecting;
      const e: ServiceExit = { pid: child.pid ?? 0, code, signal, expected, at: new Date().toISOString() };
      this.exits.push(e);
      if (!expected) void this.#logTail().then((t) => Object.assign(e, { logTail: t }));
    });
    const deadline = Date.now() + timeoutS * 1000;
    for (;;) {
      const text = (await readFile(this.logPath).catch(() => Buffer.alloc(0))).subarray(from).toString('utf8');
      const ready = parseServeOutput(text);
      if (ready) {
        this.url = ready.url;
        this.pkiDir = ready.pkiDir;
        this.#port = Number(new URL(ready.url).port);
        return;
      }
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`Ceres exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tail(text)}`);
      if (Date.now() > deadline) {
        this.#expecting = true;
        child.kill('SIGKILL');
        throw new Error(`Ceres did not print its service URL within ${timeoutS} s:\n${tail(text)}`);
      }
      await sleep(50);
    }
  }

  /** kill -9; resolves once the process is gone (it has exited, not necessarily been reaped by its jobs). */
  async kill9(): Promise<void> {
    await this.#stop('SIGKILL');
  }

  /** SIGTERM, SIGKILL after 30 s. */
  async stop(): Promise<void> {
    await this.#stop('SIGTERM');
  }

  async #stop(signal: NodeJS.Signals): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.#expecting = true;
    child.kill(signal);
    const t = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), 30_000);
    await gone;
    if (t !== undefined) clearTimeout(t);
  }

  async #logTail(): Promise<string> {
    return tail(await readFile(this.logPath, 'utf8').catch(() => ''), 15);
  }
}

/**
 * The last lines, each cut to 400 characters (a log line may carry a long stack), with
 * the build's and the temporary directories' locations taken out: the text goes into
 * result files kept in the repository.
 */
export function tail(text: string, lines = 8): string {
  return text
    .trim()
    .split('\n')
    .slice(-lines)
    .map((l) => l.replace(/file:\/\/\/\S*?\/dist\//g, '').replace(/\/tmp\/[^\s'"]+/g, '<tmp>'))
    .map((l) => (l.length > 400 ? `${l.slice(0, 400)}...` : l))
    .join('\n');
}

/** "exit 134" / "signal SIGABRT", for messages. */
export function exitText(e: ServiceExit): string {
  return e.signal !== null ? `signal ${e.signal}` : `exit ${e.code}`;
}
