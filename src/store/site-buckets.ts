/**
 * The site's load as a compact time series (site-series.ts keeps it): fixed-size buckets,
 * 5-minute ones for two days and hourly ones for sixty, each a small record of sums. Pure:
 * the shapes, the merge of two records and the bounds that keep a record small.
 *
 * The bound of a record: at most MAX_KEYS names per dimension (the busiest; the rest summed
 * under OTHER), names cut to MAX_KEY_CHARS, the states and outcomes from the vocabulary,
 * TIME_BINS + 1 histogram bins: about 4 KB at worst, so the table holds at most
 * (576 + 1440) x 4 KB = 8 MB whatever the site does (typically a few hundred KB).
 */

/** A bucket length and how many of the newest buckets of that length are kept. */
export interface Resolution {
  readonly seconds: number;
  readonly keep: number;
}

/** 5-minute buckets for 2 days, hourly ones for 60 days. */
export const RESOLUTIONS: readonly Resolution[] = [
  { seconds: 300, keep: 576 },
  { seconds: 3600, keep: 1440 },
];

/** What the active jobs are counted by, beside the whole site. */
export const DIMENSIONS = ['queue', 'vo', 'route'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export const MAX_KEYS = 12;
export const MAX_KEY_CHARS = 64;
/** The name the jobs of the names beyond MAX_KEYS are summed under. */
export const OTHER = '(other)';

/** Upper bounds (seconds) of the wait and run time bins; the last bin is everything longer. */
export const TIME_BINS: readonly number[] = [60, 300, 900, 3600, 3 * 3600, 12 * 3600, 86400];

/** One bucket's figures. Snapshot sums divide by `samples` for the mean over the bucket. */
export interface BucketData {
  /** State snapshots summed here (the means are the sums over it). */
  samples: number;
  /** Active jobs per REST state, summed over the snapshots. */
  states: Record<string, number>;
  /** Active jobs per name of each dimension, summed over the snapshots. */
  by: Record<Dimension, Record<string, number>>;
  /** Jobs that ended in the bucket, per final REST state. */
  ended: Record<string, number>;
  /** Jobs through stage-in (left PREPARING) and stage-out (left FINISHING) in the bucket. */
  stageIn: number;
  stageOut: number;
  /** Jobs that started running in the bucket, by wait (submission to start), in TIME_BINS. */
  wait: number[];
  /** Jobs that ended in the bucket after running, by run time (start to end), in TIME_BINS. */
  run: number[];
}

export function emptyBucket(): BucketData {
  return {
    samples: 0,
    states: {},
    by: { queue: {}, vo: {}, route: {} },
    ended: {},
    stageIn: 0,
    stageOut: 0,
    wait: TIME_BINS.map(() => 0).concat(0),
    run: TIME_BINS.map(() => 0).concat(0),
  };
}

/** The bin of a duration in seconds. */
export function binOf(seconds: number): number {
  const i = TIME_BINS.findIndex((b) => seconds < b);
  return i < 0 ? TIME_BINS.length : i;
}

/** The start (ms) of the bucket of `seconds` holding `t` (ms). */
export const bucketStart = (t: number, seconds: number): number => Math.floor(t / (seconds * 1000)) * seconds * 1000;

/** A name as kept: one line, cut to MAX_KEY_CHARS (a VO name comes from a VOMS server, a route's from the site). */
export function keyOf(name: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const clean = name.replace(/[\u0000-\u001f\u007f]/g, ' ');
  return clean.length > MAX_KEY_CHARS ? `${clean.slice(0, MAX_KEY_CHARS - 1)}…` : clean;
}

function add(into: Record<string, number>, from: Readonly<Record<string, number>>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/** The MAX_KEYS largest names of `m`, the rest summed under OTHER. */
export function trimmed(m: Readonly<Record<string, number>>, max = MAX_KEYS): Record<string, number> {
  const entries = Object.entries(m);
  if (entries.length <= max) return { ...m };
  // OTHER is kept as the overflow's sum, never ranked among the names.
  const named = entries.filter(([k]) => k !== OTHER).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const out: Record<string, number> = {};
  let rest = m[OTHER] ?? 0;
  named.forEach(([k, v], i) => {
    if (i < max - 1) out[k] = v;
    else rest += v;
  });
  out[OTHER] = rest;
  return out;
}

/** Adds `x` into `into` (no bound: for sums that are drawn, not stored). */
export function addInto(into: BucketData, x: BucketData): BucketData {
  into.samples += x.samples;
  add(into.states, x.states);
  add(into.ended, x.ended);
  for (const d of DIMENSIONS) add(into.by[d], x.by[d]);
  into.stageIn += x.stageIn;
  into.stageOut += x.stageOut;
  x.wait.forEach((v, i) => (into.wait[i] = (into.wait[i] ?? 0) + v));
  x.run.forEach((v, i) => (into.run[i] = (into.run[i] ?? 0) + v));
  return into;
}

/** `a` and `b` summed, trimmed to the bound (what is stored). */
export function merged(a: BucketData, b: BucketData): BucketData {
  const out = addInto(addInto(emptyBucket(), a), b);
  for (const d of DIMENSIONS) out.by[d] = trimmed(out.by[d]);
  return out;
}

const isCounts = (v: unknown): v is Record<string, number> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((n) => typeof n === 'number');
const isBins = (v: unknown): v is number[] =>
  Array.isArray(v) && v.length === TIME_BINS.length + 1 && v.every((n) => typeof n === 'number');

/** A stored record, checked (a row that does not read as one counts as empty, never as a crash). */
export function parseBucket(text: string): BucketData {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return emptyBucket();
  }
  const b = v as Partial<BucketData> | null;
  if (
    b === null ||
    typeof b !== 'object' ||
    typeof b.samples !== 'number' ||
    !isCounts(b.states) ||
    !isCounts(b.ended) ||
    typeof b.stageIn !== 'number' ||
    typeof b.stageOut !== 'number' ||
    !isBins(b.wait) ||
    !isBins(b.run) ||
    typeof b.by !== 'object' ||
    b.by === null ||
    !DIMENSIONS.every((d) => isCounts(b.by?.[d]))
  )
    return emptyBucket();
  return b as BucketData;
}
