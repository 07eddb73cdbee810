/**
 * The job page's data transfers: per input and output its URL, size, time and rate, read
 * from the `statistics` control file that staging already writes (one line per file,
 * `inputfile:url=URL,size=N,starttime=T,endtime=T[,fromcache=yes]` or `outputfile:...`,
 * docs/data-staging.md), so showing them costs no extra write. The URLs there are the
 * redacted forms (no passwords, no signed query values). The times are whole seconds (the
 * A-REX format): a transfer inside one second has no measured rate, only a lower bound.
 */
import { html, type Html } from './html.js';
import { duration } from './job-history.js';

export interface Transfer {
  readonly direction: 'in' | 'out';
  readonly url: string;
  readonly bytes: number;
  /** Whole seconds between start and end (0: within one second). */
  readonly seconds: number;
  readonly fromCache: boolean;
}

// The URL may hold commas: the fields after it are matched from the end of the line.
const LINE =
  /^(inputfile|outputfile):url=(.*),size=(\d+),starttime=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ),endtime=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)(,fromcache=yes)?$/;

/** The `statistics` file's transfer lines, in order; other lines are skipped. */
export function parseStatistics(text: string | undefined): Transfer[] {
  const out: Transfer[] = [];
  for (const line of (text ?? '').split('\n')) {
    const m = LINE.exec(line.trim());
    if (m === null) continue;
    const seconds = Math.max(0, (Date.parse(m[5] as string) - Date.parse(m[4] as string)) / 1000);
    out.push({
      direction: m[1] === 'inputfile' ? 'in' : 'out',
      url: m[2] as string,
      bytes: Number(m[3]),
      seconds,
      fromCache: m[6] !== undefined,
    });
  }
  return out;
}

/** `20.0 KiB`, `1.5 GiB`: binary units, one decimal. */
function human(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${Math.round(v)} bytes` : `${v.toFixed(1)} ${units[i]}`;
}

/** `1234567 bytes (1.2 MiB)`: the exact count, and the size as a person reads it. */
function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} bytes` : `${bytes} bytes (${human(bytes)})`;
}

function rate(bytesPerSecond: number): string {
  return `${human(bytesPerSecond)}/s`;
}

function row(t: Transfer): Html {
  const time = t.fromCache ? 'from the cache' : t.seconds === 0 ? 'under 1 s' : duration(t.seconds);
  const speed = t.fromCache
    ? '-'
    : t.seconds === 0
      ? t.bytes === 0
        ? '-'
        : `at least ${rate(t.bytes)}`
      : rate(t.bytes / t.seconds);
  return html`<tr>
    <td>${t.direction === 'in' ? 'Input' : 'Output'}</td>
    <td class="url">${t.url}</td>
    <td>${size(t.bytes)}</td>
    <td>${time}</td>
    <td>${speed}</td>
  </tr>`;
}

/** The section of the job page: a table of the transfers, totals per direction. */
export function transfersSection(transfers: readonly Transfer[]): Html {
  const total = (d: 'in' | 'out'): number =>
    transfers.filter((t) => t.direction === d).reduce((n, t) => n + t.bytes, 0);
  return html`<section aria-labelledby="tr">
    <h2 id="tr">Data transfers</h2>
    ${
      transfers.length === 0
        ? html`<p>None recorded: inputs are recorded when staged in, outputs when sent.</p>`
        : html`<div class="table-wrap">
            <table id="transfers">
              <caption>
                In: ${size(total('in'))}; out: ${size(total('out'))}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Direction</th>
                  <th scope="col" class="wide">URL</th>
                  <th scope="col">Size</th>
                  <th scope="col">Time</th>
                  <th scope="col">Rate</th>
                </tr>
              </thead>
              <tbody>
                ${transfers.map(row)}
              </tbody>
            </table>
          </div>`
    }
  </section>`;
}
