/**
 * Charts drawn on the server as inline SVG: no chart library, no script, nothing from
 * another origin (the page's policy allows none). Colours come from the style sheet's
 * classes (`c0`..`c7`, light and dark), never from style attributes, which the policy
 * forbids. Every chart is an image with a title and a description a screen reader reads,
 * a legend in HTML (it wraps on a phone) and its figures as a table behind a disclosure.
 * Every name is text put in through the escaping template, in SVG as in HTML.
 */
import { html, type Html } from './html.js';

export interface ChartSeries {
  readonly name: string;
  readonly values: readonly number[];
}

export interface Chart {
  /** A constant id (never user data): the element ids of the chart derive from it. */
  readonly id: string;
  readonly title: string;
  /** What one value is (`jobs`, `jobs per 20 minutes`), in the description and the table. */
  readonly unit: string;
  /** `stack`: areas stacked; `lines`: one line each; `bars`: bars stacked per point. */
  readonly kind: 'stack' | 'lines' | 'bars';
  /** One label per point (the table's first column). */
  readonly x: readonly string[];
  /** The few labels under the axis: point index and text. */
  readonly ticks: readonly { readonly i: number; readonly label: string }[];
  readonly series: readonly ChartSeries[];
}

const W = 640;
const H = 220;
const LEFT = 44;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 26;
const PW = W - LEFT - RIGHT;
const PH = H - TOP - BOTTOM;
const COLOURS = 8;

/** A round upper bound of the axis (1, 2 or 5 times a power of ten). */
export function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

const fmt = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(1));
const r1 = (v: number): string => (Math.round(v * 10) / 10).toString();

function summary(c: Chart): string {
  if (c.x.length === 0 || c.series.length === 0) return `${c.title}: no figures yet.`;
  const parts = c.series.map((s) => {
    const max = Math.max(...s.values);
    const total = s.values.reduce((a, b) => a + b, 0);
    return `${s.name}: highest ${fmt(max)}, total ${fmt(total)}`;
  });
  return `${c.title}, ${c.unit}, from ${c.x[0]} to ${c.x[c.x.length - 1]}. ${parts.join('; ')}.`;
}

export function chart(c: Chart): Html {
  const n = c.x.length;
  const stacked = c.kind !== 'lines';
  const tops = Array.from({ length: n }, (_, i) =>
    stacked
      ? c.series.reduce((a, s) => a + (s.values[i] ?? 0), 0)
      : Math.max(0, ...c.series.map((s) => s.values[i] ?? 0)),
  );
  const max = niceMax(Math.max(0, ...tops));
  const slot = n === 0 ? PW : PW / n;
  const xAt = (i: number) =>
    c.kind === 'bars' ? LEFT + slot * (i + 0.5) : LEFT + (n <= 1 ? PW / 2 : (PW * i) / (n - 1));
  const yAt = (v: number) => TOP + PH - (PH * v) / max;
  const base = Array.from({ length: n }, () => 0);
  const shapes = c.series.map((s, k) => {
    const cls = `c${k % COLOURS}`;
    const below = base.slice();
    const above = below.map((b, i) => (stacked ? b : 0) + (s.values[i] ?? 0));
    if (stacked) above.forEach((v, i) => (base[i] = v));
    if (c.kind === 'bars') {
      const w = Math.max(1, slot * 0.8);
      return html`<g class="${cls}">
        ${above.map((v, i) =>
          v === below[i]
            ? ''
            : html`<rect x="${r1(xAt(i) - w / 2)}" y="${r1(yAt(v))}" width="${r1(w)}" height="${r1(yAt(below[i]!) - yAt(v))}" />`,
        )}
      </g>`;
    }
    const line = above.map((v, i) => `${r1(xAt(i))},${r1(yAt(v))}`).join(' ');
    if (c.kind === 'lines') return html`<polyline class="line ${cls}" points="${line}" />`;
    const back = below
      .map((v, i) => `${r1(xAt(i))},${r1(yAt(v))}`)
      .reverse()
      .join(' ');
    return html`<polygon class="area ${cls}" points="${line} ${back}" />`;
  });
  const t = `${c.id}-t`;
  const d = `${c.id}-d`;
  return html`<figure class="chart" id="${c.id}">
    <svg viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="${t} ${d}" preserveAspectRatio="xMidYMid meet">
      <title id="${t}">${c.title}</title>
      <desc id="${d}">${summary(c)}</desc>
      <g class="grid">
        ${[0, 0.5, 1].map(
          (f) =>
            html`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${r1(yAt(max * f))}" y2="${r1(yAt(max * f))}" /><text
                x="${LEFT - 4}"
                y="${r1(yAt(max * f) + 4)}"
                text-anchor="end"
              >
                ${fmt(max * f)}
              </text>`,
        )}
        ${c.ticks.map(
          (k) =>
            html`<text x="${r1(xAt(k.i))}" y="${H - 8}" text-anchor="${k.i === 0 && c.kind !== 'bars' ? 'start' : k.i === n - 1 && c.kind !== 'bars' ? 'end' : 'middle'}">${k.label}</text>`,
        )}
      </g>
      ${shapes}
    </svg>
    <figcaption>
      <strong>${c.title}</strong> <span class="muted">(${c.unit})</span>
      <ul class="legend">
        ${c.series.map((s, k) => html`<li><span class="sw c${k % COLOURS}" aria-hidden="true"></span>${s.name}</li>`)}
      </ul>
    </figcaption>
    <details>
      <summary>Figures of “${c.title}” as a table</summary>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              ${c.series.map((s) => html`<th scope="col">${s.name}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${c.x.map(
              (x, i) =>
                html`<tr>
                  <th scope="row">${x}</th>
                  ${c.series.map((s) => html`<td>${fmt(s.values[i] ?? 0)}</td>`)}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </details>
  </figure>`;
}
