/**
 * The service side of the launcher (the C one, ./launcher-c.ts, or the Node fallback,
 * ./launcher.ts; the same protocol, ./launcher-protocol.ts): starts the helper process on
 * first use, sends spawn requests, matches answers to them and reports wrapper exits. If
 * the launcher dies, pending spawns fail, `onDeath` lets the backend fall back to polling,
 * and the next spawn starts a new launcher.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { ceError } from '../../errors/ce-error.js';
import { decodeAnswer, encodeRequest, FrameReader } from './launcher-protocol.js';

export interface Started {
  readonly pid: number;
  /** First line the wrapper printed: `ok <pid>`, `dup` or `error ...`. */
  readonly line: string;
}

export interface LauncherHandlers {
  /** A wrapper started through this launcher has ended (it was reaped); `claimed`: it had answered "ok". */
  onExit(pid: number, claimed: boolean): void;
  /** The launcher went away unexpectedly; exits of running wrappers will not be reported. */
  onDeath(): void;
}

/** Which launcher runs: the compiled C program at `path`, or the Node fallback. */
export type LauncherProgram = { readonly kind: 'c'; readonly path: string } | { readonly kind: 'node' };

const LAUNCHER_SCRIPT = fileURLToPath(new URL('./launcher.js', import.meta.url));
// A small heap is all the launcher needs; a small process keeps every fork() cheap.
const LAUNCHER_FLAGS = ['--max-old-space-size=32', '--max-semi-space-size=1'];

export class LauncherClient {
  readonly #handlers: LauncherHandlers;
  #child: ChildProcess | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, { resolve: (s: Started) => void; reject: (e: Error) => void }>();
  #closing = false;

  readonly program: LauncherProgram;

  constructor(handlers: LauncherHandlers, program: LauncherProgram = { kind: 'node' }) {
    this.#handlers = handlers;
    this.program = program;
  }

  /** Process id of the running launcher (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  #start(): ChildProcess {
    const [file, args] =
      this.program.kind === 'c' ? [this.program.path, []] : [process.execPath, [...LAUNCHER_FLAGS, LAUNCHER_SCRIPT]];
    const child = spawn(file, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    child.stdin?.on('error', () => undefined);
    // Answers are small and never larger than this; a longer length means a broken stream.
    const frames = new FrameReader(1024 * 1024);
    child.stdout?.on('data', (chunk: Buffer) => {
      let got: Buffer[];
      try {
        got = frames.push(chunk);
      } catch {
        child.kill('SIGKILL'); // out of step: treated as a launcher death
        return;
      }
      for (const f of got) this.#onFrame(f);
    });
    child.on('exit', () => {
      if (this.#child === child) this.#child = undefined;
      const lost = [...this.#pending.values()];
      this.#pending.clear();
      for (const p of lost) p.reject(ceError('CE_ERR_LRMS_UNAVAILABLE', 'The job launcher ended'));
      if (!this.#closing) this.#handlers.onDeath();
    });
    child.on('error', () => undefined);
    this.#child = child;
    return child;
  }

  #onFrame(frame: Buffer): void {
    const msg = decodeAnswer(frame);
    if (!msg) return;
    if (msg.op === 'exit') {
      this.#handlers.onExit(msg.pid, msg.claimed);
      return;
    }
    const p = this.#pending.get(msg.id);
    if (!p) return;
    this.#pending.delete(msg.id);
    if (msg.op === 'started') p.resolve({ pid: msg.pid, line: msg.line });
    else p.reject(ceError('CE_ERR_LRMS_SUBMIT_FAILED', `The job wrapper could not be started: ${msg.message}`));
  }

  /** Start `file args` detached, with exactly `env`; resolves once it printed its first line. */
  spawn(file: string, args: readonly string[], env: Record<string, string>): Promise<Started> {
    if (this.#closing) return Promise.reject(ceError('CE_ERR_LRMS_CLOSED'));
    const id = this.#nextId;
    this.#nextId = (id % 0xffff_ffff) + 1; // ids are u32 on the wire
    let frame: Buffer;
    try {
      frame = encodeRequest(id, file, args, env);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return Promise.reject(ceError('CE_ERR_LRMS_SUBMIT_FAILED', `The job wrapper could not be started: ${why}`));
    }
    const child = this.#child ?? this.#start();
    return new Promise<Started>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      child.stdin?.write(frame);
    });
  }

  /** End the launcher (running wrappers are not affected). */
  async close(): Promise<void> {
    this.#closing = true;
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.stdin?.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
