/**
 * The Node launcher: the fallback when the C launcher (./launcher-c.ts) cannot be compiled.
 * A small, long-lived helper process that starts job wrappers for the fork backend. It
 * exists because fork() cost grows with the parent's memory (measured: 1.2 ms at 41 MiB,
 * 13 ms at 299 MiB): the service may hold many jobs in memory, this process holds
 * nothing, so each spawn stays cheap and never blocks the service.
 *
 * Protocol: binary frames (./launcher-protocol.ts, the same as the C launcher's): spawn
 * requests on stdin; on stdout 'started' with the wrapper's first line (at most LINE_MAX
 * bytes; what it wrote after is dropped), 'error' if it could not start, and 'exit' once
 * it was reaped, with whether its first line began "ok " (it ran a job).
 * Wrappers run detached (own session); when stdin closes (the service went away) the
 * launcher lets go of them and ends, and they keep running.
 *
 * Run as a program only (`node launcher.js`); it imports nothing from the service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { decodeRequest, encodeAnswer, FrameReader, LINE_MAX, type Request } from './launcher-protocol.js';

const children = new Set<ChildProcess>();

function send(frame: Buffer): void {
  process.stdout.write(frame);
}

function envObject(entries: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of entries) {
    const eq = e.indexOf('=');
    if (eq > 0) env[e.slice(0, eq)] = e.slice(eq + 1);
  }
  return env;
}

const SPACE = new Set([0x20, 0x09, 0x0a, 0x0d, 0x0b, 0x0c]);

/** Without leading and trailing ASCII white space (as the C launcher trims). */
function trimmed(b: Buffer): Buffer {
  let s = 0;
  let e = b.length;
  while (e > s && SPACE.has(b[e - 1] ?? 0)) e--;
  while (s < e && SPACE.has(b[s] ?? 0)) s++;
  return b.subarray(s, e);
}

function start(req: Request): void {
  let answered = false;
  let out = Buffer.alloc(0);
  const answer = (frame: Buffer): void => {
    if (answered) return;
    answered = true;
    out = Buffer.alloc(0);
    send(frame);
  };
  let child: ChildProcess;
  try {
    child = spawn(req.file, req.args, {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: envObject(req.env),
    });
  } catch (e) {
    answer(encodeAnswer('error', req.id, 0, e instanceof Error ? e.message : String(e)));
    return;
  }
  children.add(child);
  let claimed = false;
  const started = (line: Buffer): void => {
    if (answered || child.pid === undefined) return;
    claimed = line.subarray(0, 3).toString('latin1') === 'ok ';
    answer(encodeAnswer('started', req.id, child.pid, line));
  };
  child.stdout?.on('data', (chunk: Buffer) => {
    if (answered) return; // what follows the first line is dropped
    out = Buffer.concat([out, chunk.subarray(0, LINE_MAX - out.length)]);
    const nl = out.indexOf(0x0a);
    if (nl >= 0) started(out.subarray(0, nl));
    else if (out.length >= LINE_MAX) started(out);
  });
  child.on('error', (e) => answer(encodeAnswer('error', req.id, 0, e.message)));
  child.on('close', () => {
    children.delete(child);
    if (child.pid === undefined) return;
    started(trimmed(out));
    send(encodeAnswer('exit', child.pid, claimed ? 1 : 0));
  });
}

// Writing to a service that is gone must not kill the launcher before it lets go.
process.stdout.on('error', () => undefined);

const frames = new FrameReader();
process.stdin.on('data', (chunk: Buffer) => {
  let got: Buffer[];
  try {
    got = frames.push(chunk);
  } catch {
    process.exit(2); // a broken stream: the service sees the launcher end
  }
  for (const f of got) {
    const req = decodeRequest(f);
    if (req) start(req);
    else if (f.length >= 4) send(encodeAnswer('error', f.readUInt32LE(0), 22, 'malformed request'));
  }
});
process.stdin.on('end', () => {
  // Let go of the wrappers: they are detached and outlive us; nothing keeps us alive.
  for (const c of children) {
    c.stdout?.destroy();
    c.removeAllListeners('close');
    c.unref();
  }
  children.clear();
});
