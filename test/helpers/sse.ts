/**
 * A Server-Sent Events reader for the job event stream over real TLS (undici, the test
 * client's agent): it parses events as they come and lets a test wait for one.
 */
import { request, type Dispatcher } from 'undici';
import { until } from './poll.js';

export interface SseEvent {
  readonly id?: string;
  readonly event: string;
  readonly data: string;
}

export interface SseStream {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  /** Every event so far, in order. */
  readonly events: SseEvent[];
  /** Comment lines so far (heartbeats). */
  readonly comments: string[];
  /** The body text of a refusal (status not 200). */
  readonly text: string;
  /** Called with each event as it is parsed (timing, benchmarks). */
  onEvent?: (e: SseEvent) => void;
  /** Whether the service ended the stream. */
  ended(): boolean;
  /** Waits for an event that `pred` accepts (the first already seen counts). */
  waitFor(pred: (e: SseEvent) => boolean, what: string, timeoutMs?: number): Promise<SseEvent>;
  close(): void;
}

export async function openStream(
  agent: Dispatcher,
  url: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const ac = new AbortController();
  const r = await request(url, {
    dispatcher: agent,
    headers: { accept: 'text/event-stream', ...headers },
    signal: ac.signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let done = false;
  let text = '';
  if (r.statusCode !== 200) {
    text = await r.body.text();
    done = true;
  } else {
    let buf = '';
    r.body.setEncoding('utf8');
    r.body.on('data', (chunk: string) => {
      buf += chunk;
      for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
        const block = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const e: { id?: string; event: string; data: string[] } = { event: 'message', data: [] };
        let any = false;
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else if (line.startsWith('id: ')) e.id = line.slice(4);
          else if (line.startsWith('event: ')) e.event = line.slice(7);
          else if (line.startsWith('data: ')) e.data.push(line.slice(6));
          else continue;
          if (!line.startsWith(':')) any = true;
        }
        if (any && e.data.length > 0) {
          const ev = { ...(e.id === undefined ? {} : { id: e.id }), event: e.event, data: e.data.join('\n') };
          events.push(ev);
          stream.onEvent?.(ev);
        }
      }
    });
    r.body.on('end', () => (done = true));
    r.body.on('error', () => (done = true));
  }
  const stream: SseStream = {
    status: r.statusCode,
    headers: r.headers,
    events,
    comments,
    text,
    ended: () => done,
    async waitFor(pred, what, timeoutMs = 60_000) {
      let hit: SseEvent | undefined;
      await until(() => (hit = events.find(pred)) !== undefined, what, timeoutMs);
      return hit!;
    },
    close() {
      done = true;
      ac.abort();
    },
  };
  return stream;
}

/** The JSON data of a `state` event. */
export function dataOf(e: SseEvent): Record<string, any> {
  return JSON.parse(e.data) as Record<string, any>;
}

/** The service's open-streams gauge, read from its metrics listener (config `metrics.listen`). */
export async function openStreamsGauge(output: string): Promise<number> {
  const url = /metrics URL (\S+)/.exec(output)?.[1];
  if (url === undefined) throw new Error('the service has no metrics listener');
  const text = await (await request(url)).body.text();
  return Number(/^ceres_event_streams_open (\d+)/m.exec(text)?.[1] ?? NaN);
}
