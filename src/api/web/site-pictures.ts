/**
 * The overview's pictures of the site's load, from the time series the service keeps
 * (src/store/site-series.ts): active jobs per state, per queue and (for those allowed) per
 * VO and route; jobs ended per interval; stage-in and stage-out passages; wait and run
 * time distributions. A window is 6 hours, 48 hours or 60 days, drawn as at most
 * MAX_POINTS points (buckets summed), so a page stays small whatever the window. No I/O.
 */
import type { BucketData, Dimension } from '../../store/site-buckets.js';
import { addInto, DIMENSIONS, emptyBucket, OTHER, TIME_BINS } from '../../store/site-buckets.js';
import type { SeriesPoint } from '../../store/site-series.js';
import { ENDED_REST_STATES, OUTCOME_REST_STATES, REST_STATES } from '../../vocabulary/job-states.js';
import { html, type Html } from './html.js';
import { chart, type ChartSeries } from './svg-chart.js';

export interface PictureWindow {
  readonly name: string;
  readonly label: string;
  /** Length of the stored buckets read (seconds). */
  readonly resolution: number;
  readonly spanSeconds: number;
  /** Buckets summed into one point. */
  readonly group: number;
}

export const WINDOWS: readonly PictureWindow[] = [
  { name: '6h', label: 'last 6 hours', resolution: 300, spanSeconds: 6 * 3600, group: 1 },
  { name: '48h', label: 'last 48 hours', resolution: 300, spanSeconds: 48 * 3600, group: 4 },
  { name: '60d', label: 'last 60 days', resolution: 3600, spanSeconds: 60 * 86400, group: 10 },
];
export const DEFAULT_WINDOW = WINDOWS[0]!;

/** Names drawn per dimension; the others are summed as one line. */
export const LEGEND_MAX = 6;

const ACTIVE = REST_STATES.filter((s) => !ENDED_REST_STATES.includes(s));
const DIMENSION_TITLES: Record<Dimension, string> = { queue: 'queue', vo: 'VO', route: 'route' };
const NO_NAME: Record<Dimension, string> = { queue: '(none)', vo: '(no VO)', route: '(none)' };

const stamp = (ms: number, days: boolean): string => {
  const iso = new Date(ms).toISOString();
  return days ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
};
const binLabel = (i: number): string => {
  // Short: eight labels share the axis of a phone's picture.
  const h = (s: number) => (s < 3600 ? `${s / 60}m` : s < 86400 ? `${s / 3600}h` : `${s / 86400}d`);
  if (i === 0) return `< ${h(TIME_BINS[0]!)}`;
  if (i === TIME_BINS.length) return `≥ ${h(TIME_BINS[i - 1]!)}`;
  return `${h(TIME_BINS[i - 1]!)}–${h(TIME_BINS[i]!)}`;
};
const interval = (w: PictureWindow): string => {
  const s = w.resolution * w.group;
  return s < 3600 ? `${s / 60} minutes` : `${s / 3600} hours`;
};

/** The window's points: one per `group` buckets from the window's start to now, missing buckets empty. */
export function windowPoints(
  w: PictureWindow,
  stored: readonly SeriesPoint[],
  now: number,
): { start: number; data: BucketData }[] {
  const step = w.resolution * 1000 * w.group;
  const last = Math.floor(now / step) * step;
  const first = last - (Math.ceil((w.spanSeconds * 1000) / step) - 1) * step;
  const out = new Map<number, BucketData>();
  for (let t = first; t <= last; t += step) out.set(t, emptyBucket());
  for (const p of stored) {
    const t = Math.floor(p.start / step) * step;
    const had = out.get(t);
    if (had !== undefined) addInto(had, p.data);
  }
  return [...out].map(([start, data]) => ({ start, data }));
}

const mean = (sum: number | undefined, samples: number) =>
  samples === 0 ? 0 : Math.round(((sum ?? 0) / samples) * 10) / 10;

/** The LEGEND_MAX busiest names over the window, the rest (and what the store summed already) as OTHER. */
function topSeries(points: readonly { data: BucketData }[], d: Dimension): ChartSeries[] {
  const totals = new Map<string, number>();
  for (const p of points) for (const [k, v] of Object.entries(p.data.by[d])) totals.set(k, (totals.get(k) ?? 0) + v);
  const named = [...totals].filter(([k]) => k !== OTHER).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = named.slice(0, LEGEND_MAX).map(([k]) => k);
  const series: ChartSeries[] = shown.map((k) => ({
    name: k === '' ? NO_NAME[d] : k,
    values: points.map((p) => mean(p.data.by[d][k], p.data.samples)),
  }));
  if (named.length > LEGEND_MAX || totals.has(OTHER)) {
    const keep = new Set(shown);
    series.push({
      name: 'other',
      values: points.map((p) =>
        mean(
          Object.entries(p.data.by[d])
            .filter(([k]) => !keep.has(k))
            .reduce((a, [, v]) => a + v, 0),
          p.data.samples,
        ),
      ),
    });
  }
  return series;
}

const BIN_TICKS = [...TIME_BINS, Infinity].map((_, i) => ({ i, label: binLabel(i) }));

/** Jobs per time bin (TIME_BINS), summed over the window. */
const histogram = (id: string, title: string, unit: string, values: readonly number[]): Html =>
  chart({
    id,
    title,
    unit,
    kind: 'bars',
    x: BIN_TICKS.map((b) => b.label),
    ticks: BIN_TICKS,
    series: [{ name: 'jobs', values }],
  });

export function sitePictures(o: {
  mount: string;
  window: PictureWindow;
  stored: readonly SeriesPoint[];
  now: number;
  /** The dimensions this caller may see per name (queue always; VO and route by policy). */
  dimensions: readonly Dimension[];
  /** How often the page fetches the pictures again (seconds). */
  refreshSeconds?: number;
}): Html {
  const w = o.window;
  const points = windowPoints(w, o.stored, o.now);
  const days = w.spanSeconds > 86400;
  const x = points.map((p) => stamp(p.start, days));
  const every = Math.max(1, Math.ceil(points.length / 5));
  const ticks = x.map((label, i) => ({ i, label })).filter(({ i }) => i % every === 0);
  const per = interval(w);
  const states = ACTIVE.filter((s) => points.some((p) => (p.data.states[s] ?? 0) > 0));
  const total = points.reduce((a, p) => addInto(a, p.data), emptyBucket());
  const charts: Html[] = [
    chart({
      id: 'pic-states',
      title: 'Active jobs by state',
      unit: `jobs, mean per ${per}`,
      kind: 'stack',
      x,
      ticks,
      series: states.map((s) => ({ name: s, values: points.map((p) => mean(p.data.states[s], p.data.samples)) })),
    }),
    ...DIMENSIONS.filter(
      (d) => o.dimensions.includes(d) && points.some((p) => Object.keys(p.data.by[d]).length > 0),
    ).map((d) =>
      chart({
        id: `pic-${d}`,
        title: `Active jobs per ${DIMENSION_TITLES[d]}`,
        unit: `jobs, mean per ${per}`,
        kind: 'lines',
        x,
        ticks,
        series: topSeries(points, d),
      }),
    ),
    chart({
      id: 'pic-ended',
      title: 'Jobs ended (throughput)',
      unit: `jobs per ${per}`,
      kind: 'bars',
      x,
      ticks,
      series: OUTCOME_REST_STATES.map((s) => ({ name: s, values: points.map((p) => p.data.ended[s] ?? 0) })),
    }),
    chart({
      id: 'pic-staging',
      title: 'Staging',
      unit: `jobs through stage-in and stage-out per ${per}`,
      kind: 'lines',
      x,
      ticks,
      series: [
        { name: 'stage-in done', values: points.map((p) => p.data.stageIn) },
        { name: 'stage-out done', values: points.map((p) => p.data.stageOut) },
      ],
    }),
    histogram('pic-wait', 'Wait time (submission to start)', `jobs started in the ${w.label}`, total.wait),
    histogram('pic-run', 'Run time (start to end)', `jobs ended in the ${w.label}`, total.run),
  ];
  return html`<section
    aria-labelledby="pics"
    id="site-pictures"
    hx-get="${o.mount}/web/site-pictures?window=${w.name}"
    hx-trigger="every ${o.refreshSeconds ?? 60}s"
    hx-swap="outerHTML"
  >
    <h2 id="pics">Site load, ${w.label}</h2>
    <nav aria-label="Time window" class="actions">
      ${WINDOWS.map((x) =>
        x.name === w.name
          ? html`<strong aria-current="true">${x.label}</strong>`
          : html`<a href="${o.mount}/?window=${x.name}#pics">${x.label}</a>`,
      )}
    </nav>
    <p class="muted">Refreshed every ${o.refreshSeconds === undefined || o.refreshSeconds >= 60 ? '5 minutes' : `${o.refreshSeconds} s`}; times in UTC. ${o.dimensions.includes('vo') ? '' : 'Figures per VO and route are shown to site administrators.'}</p>
    <div class="charts">${charts}</div>
  </section>`;
}
