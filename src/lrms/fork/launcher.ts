/**
 * The launcher: a small, long-lived helper process that starts job wrappers for the
 * fork backend. It exists because fork() cost grows with the parent's memory
 * (measured: 1.2 ms at 41 MiB, 13 ms at 299 MiB): the service may hold many jobs in memory, this process
 * holds nothing, so each spawn stays cheap and never blocks the service.
 *
 * Protocol: newline-delimited JSON. stdin carries requests, stdout the answers.
 *   → {"op":"spawn","id":N,"file":PATH,"args":[...],"env":{...}}
 *   ← {"op":"started","id":N,"pid":P,"line":"ok P T"}   first line the wrapper printed
 *   ← {"op":"error","id":N,"message":"..."}             could not start it
 *   ← {"op":"exit","pid":P,"code":C,"signal":S,"claimed":B}  the wrapper ended (after "started");
 *                                                       B: it had answered "ok" (ran a job)
 * Wrappers run detached (own session); when stdin closes (the service went away) the
 * launcher lets go of them and ends, and they keep running.
 *
 * Run as a program only (`node launcher.js`); it imports nothing from the service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

interface SpawnRequest {
  readonly op: 'spawn';
  readonly id: number;
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Record<string, string>;
}

const children = new Set<ChildProcess>();

function send(msg: object): void {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
}

function start(req: SpawnRequest): void {
  let answered = false;
  const answer = (msg: object): void => {
    if (answered) return;
    answered = true;
    send(msg);
  };
  let child: ChildProcess;
  try {
    child = spawn(req.file, req.args, { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: req.env });
  } catch (e) {
    answer({ op: 'error', id: req.id, message: e instanceof Error ? e.message : String(e) });
    return;
  }
  children.add(child);
  let out = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    out += chunk;
    const nl = out.indexOf('\n');
    if (nl >= 0) answer({ op: 'started', id: req.id, pid: child.pid, line: out.slice(0, nl) });
  });
  child.on('error', (e) => answer({ op: 'error', id: req.id, message: e.message }));
  child.on('close', (code, signal) => {
    children.delete(child);
    if (child.pid === undefined) return;
    answer({ op: 'started', id: req.id, pid: child.pid, line: out.trim() });
    // `claimed`: the wrapper answered "ok" (it ran a job), not "dup" or an error.
    send({ op: 'exit', pid: child.pid, code, signal, claimed: out.startsWith('ok ') });
  });
}

// Writing to a service that is gone must not kill the launcher before it lets go.
process.stdout.on('error', () => undefined);

const input = createInterface({ input: process.stdin });
input.on('line', (line) => {
  let req: SpawnRequest;
  try {
    req = JSON.parse(line) as SpawnRequest;
  } catch {
    return;
  }
  if (req.op === 'spawn') start(req);
});
input.on('close', () => {
  // Let go of the wrappers: they are detached and outlive us; nothing keeps us alive.
  for (const c of children) {
    c.stdout?.destroy();
    c.removeAllListeners('close');
    c.unref();
  }
  children.clear();
});
