/** Reading the loopback listener's Prometheus text in tests. */
import { request } from 'undici';
import type { RunningCeres } from '../helpers/service.js';

/** The metrics URL the service printed at start. */
export function metricsUrl(c: RunningCeres): string {
  const u = /metrics URL (\S+)/.exec(c.output())?.[1];
  if (u === undefined) throw new Error(`no metrics URL in: ${c.output()}`);
  return u;
}

export async function get(url: string): Promise<{ status: number; text: string; type: string | undefined }> {
  const r = await request(url);
  const text = await r.body.text();
  return { status: r.statusCode, text, type: r.headers['content-type'] as string | undefined };
}

export async function scrape(c: RunningCeres): Promise<string> {
  const r = await get(metricsUrl(c));
  if (r.status !== 200) throw new Error(`scrape: ${r.status}`);
  return r.text;
}

/** The value of one series (exact labels as printed, in any order), or undefined. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = new Map([...(m[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got.get(k) === v) && got.size === Object.keys(labels).length)
      return Number(m[4]);
  }
  return undefined;
}
