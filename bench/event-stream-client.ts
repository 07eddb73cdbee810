/**
 * The following client of event-stream-follow.bench.ts, in a process of its own so that
 * its CPU time is its own (process.cpuUsage), not mixed with the bench's change driver.
 * Started with fork(); driven by messages (ClientRequest) and answering ClientReport.
 *
 * It is what a careful client writes, and does all a real one must: it reads the body as
 * text (a UTF-8 decoder across chunks), splits lines with indexOf from where it stopped
 * (a chunk is appended to the unfinished tail only, never to everything read so far),
 * takes the fields of the SSE format (id, event, data; comments skipped; CR LF or LF line
 * ends), parses every state event's JSON and keeps each job's state in a Map.
 */
import { readFileSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Agent, request } from 'undici';

export type ClientRequest =
  | { readonly op: 'open'; readonly url: string; readonly token: string; readonly ca: string; readonly lastId?: string }
  | { readonly op: 'stat' }
  | { readonly op: 'waitFor'; readonly events: number; readonly timeoutMs: number }
  | { readonly op: 'close' }
  | { readonly op: 'exit' };

export interface ClientReport {
  readonly op: string;
  /** This process's CPU time so far (user + system, µs). */
  readonly cpuUs: number;
  /** State events parsed so far. */
  readonly events: number;
  /** Chunks (reads) that carried text. */
  readonly chunks: number;
  readonly lastId: string | undefined;
  readonly ok: boolean;
  readonly error?: string;
}

/** An SSE reader that keeps the state of every job it hears of. */
export class StreamFollower {
  readonly states = new Map<string, string>();
  events = 0;
  chunks = 0;
  lastId: string | undefined;
  #tail = '';
  #id: string | undefined;
  #event = '';
  #data = '';

  /** Takes one decoded chunk of the body. */
  take(chunk: string): void {
    this.chunks++;
    const text = this.#tail === '' ? chunk : this.#tail + chunk;
    let pos = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; pos = nl + 1, nl = text.indexOf('\n', pos)) {
      const end = nl > pos && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      if (end === pos) this.#dispatch();
      else if (text.charCodeAt(pos) !== 58) this.#field(text, pos, end); // ':' starts a comment
    }
    this.#tail = pos === text.length ? '' : text.slice(pos);
  }

  #field(text: string, pos: number, end: number): void {
    let colon = text.indexOf(':', pos);
    if (colon < 0 || colon > end) colon = end;
    let v = colon + 1;
    if (v < end && text.charCodeAt(v) === 32) v++;
    const value = v >= end ? '' : text.slice(v, end);
    switch (colon - pos) {
      case 4:
        if (text.startsWith('data', pos)) this.#data = this.#data === '' ? value : `${this.#data}\n${value}`;
        break;
      case 5:
        if (text.startsWith('event', pos)) this.#event = value;
        break;
      case 2:
        if (text.startsWith('id', pos)) this.#id = value;
        break;
    }
  }

  #dispatch(): void {
    if (this.#data !== '') {
      if (this.#id !== undefined) this.lastId = this.#id;
      if (this.#event === 'state') {
        const e = JSON.parse(this.#data) as { id: string; state: string };
        this.states.set(e.id, e.state);
        this.events++;
      }
    }
    this.#event = '';
    this.#data = '';
  }
}

function cpuUs(): number {
  const c = process.cpuUsage();
  return c.user + c.system;
}

if (process.send !== undefined) {
  const f = new StreamFollower();
  let ac: AbortController | undefined;
  let agent: Agent | undefined;
  let waiting: { events: number; timer: NodeJS.Timeout } | undefined;
  const report = (op: string, ok = true, error?: string): void => {
    process.send!({ op, cpuUs: cpuUs(), events: f.events, chunks: f.chunks, lastId: f.lastId, ok, error });
  };
  const checkWait = (): void => {
    if (waiting !== undefined && f.events >= waiting.events) {
      clearTimeout(waiting.timer);
      waiting = undefined;
      report('waitFor');
    }
  };
  process.on('message', (m: ClientRequest) => {
    if (m.op === 'open') {
      ac = new AbortController();
      agent = new Agent({ connect: { ca: readFileSync(m.ca, 'utf8') } });
      request(m.url, {
        dispatcher: agent,
        headers: {
          accept: 'text/event-stream',
          authorization: `Bearer ${m.token}`,
          ...(m.lastId !== undefined ? { 'last-event-id': m.lastId } : {}),
        },
        signal: ac.signal,
      }).then(
        (r) => {
          if (r.statusCode !== 200) return report('open', false, `HTTP ${r.statusCode}`);
          // undici's body gives Buffers whatever setEncoding says: decode here, a character
          // cut between two chunks kept for the next.
          const utf8 = new StringDecoder('utf8');
          r.body.on('data', (chunk: Buffer) => {
            f.take(utf8.write(chunk));
            checkWait();
          });
          r.body.on('error', () => {});
          report('open');
        },
        (e: Error) => report('open', false, e.message),
      );
    } else if (m.op === 'stat') report('stat');
    else if (m.op === 'waitFor') {
      waiting = {
        events: m.events,
        timer: setTimeout(() => {
          waiting = undefined;
          report('waitFor', false, 'timeout');
        }, m.timeoutMs),
      };
      checkWait();
    } else if (m.op === 'close') {
      ac?.abort();
      void agent?.close().catch(() => {});
      report('close');
    } else process.exit(0);
  });
}
