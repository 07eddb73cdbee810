/**
 * Markdown renderings of a run: one table for a single endpoint, and the side-by-side
 * table with a ratio per figure for a comparison. Pure functions of the report.
 */
import type { EndpointReport, Metric, RunReport, ScenarioResult } from './results.js';
import { advantage } from './results.js';

/** Readable number: thousands separators, about three significant digits below 100. */
export function formatNumber(v: number): string {
  if (Number.isNaN(v)) return 'n/a';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '-∞';
  const a = Math.abs(v);
  // Counts are integers and read best without decimals ("10 jobs", not "10.0 jobs").
  if (a >= 100 || Number.isInteger(v)) return Math.round(v).toLocaleString('en-US');
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  if (a === 0) return '0';
  return v.toPrecision(3);
}

export function formatMetric(m: Metric): string {
  return m.unit === '' ? formatNumber(m.value) : `${formatNumber(m.value)} ${m.unit}`;
}

export function formatRatio(r: number | undefined): string {
  if (r === undefined) return '';
  return `${formatNumber(r)}×`;
}

/** Table cells must not break the table. */
export function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');
}

function statusText(r: ScenarioResult | undefined): string {
  if (r === undefined) return 'not run';
  if (r.status === 'failed') return `failed: ${r.reason ?? 'unknown reason'}`;
  if (r.status === 'skipped') return `skipped: ${r.reason ?? ''}`.trim();
  if (r.status === 'partial' && r.metrics.length === 0) return `partial: ${r.reason ?? ''}`.trim();
  return '';
}

/** One console line per finished scenario. */
export function scenarioLine(label: string, r: ScenarioResult): string {
  const head = `${label} / ${r.scenario} (${formatNumber(r.seconds)} s)`;
  if (r.metrics.length === 0) return `${head}: ${statusText(r)}`;
  const figures = r.metrics.map((m) => `${m.label} ${formatMetric(m)}`).join('; ');
  return `${head}: ${figures}${r.status === 'partial' ? ` (partial: ${r.reason ?? ''})` : ''}`;
}

function valueCell(r: ScenarioResult | undefined, key: string): string {
  const m = r?.metrics.find((x) => x.key === key);
  if (m === undefined) return statusText(r) || '—';
  return r?.status === 'partial' ? `${formatMetric(m)} (partial)` : formatMetric(m);
}

/** Scenario names in first-seen order across endpoints. */
function scenarioOrder(endpoints: readonly EndpointReport[]): string[] {
  const seen: string[] = [];
  for (const e of endpoints) for (const r of e.results) if (!seen.includes(r.scenario)) seen.push(r.scenario);
  return seen;
}

function metricOrder(results: readonly (ScenarioResult | undefined)[]): Metric[] {
  const out: Metric[] = [];
  for (const r of results) for (const m of r?.metrics ?? []) if (!out.some((x) => x.key === m.key)) out.push(m);
  return out;
}

/** "jobs: Ceres 1,000, A-REX 100" for every count that differs between endpoints. */
export function paramDifferences(labels: readonly string[], results: readonly (ScenarioResult | undefined)[]): string {
  const keys = new Set<string>();
  for (const r of results) for (const k of Object.keys(r?.params ?? {})) keys.add(k);
  const parts: string[] = [];
  for (const k of keys) {
    const vals = results.map((r) => r?.params[k]);
    const present = vals.filter((v) => v !== undefined);
    if (present.length < 2 || present.every((v) => v === present[0])) continue;
    parts.push(
      `${k}: ${vals.map((v, i) => `${labels[i]} ${typeof v === 'number' ? formatNumber(v) : (v ?? '—')}`).join(', ')}`,
    );
  }
  return parts.join('; ');
}

function header(report: RunReport): string[] {
  const m = report.machine;
  return [
    `- date: ${report.date}`,
    `- commit: ${report.commit}`,
    `- machine: ${m.cpu}, ${m.cores} cores, ${formatNumber(m.memoryGiB)} GiB RAM, Linux ${m.kernel}, Node ${m.node}`,
    ...report.endpoints.map(
      (e) =>
        `- ${e.label}: ${e.url} (REST ${e.version}; server key ${e.serverKey}${e.pids.length ? `; pid ${e.pids.join(', ')}` : ''})`,
    ),
    `- mode: ${report.quick ? 'quick (scaled-down counts)' : 'full'}${report.complete ? '' : '; **incomplete run** (interrupted, or still going on)'}`,
  ];
}

function notesSection(endpoints: readonly EndpointReport[]): string[] {
  const lines: string[] = [];
  for (const e of endpoints) {
    for (const r of e.results) {
      const extra = [...r.notes];
      if (r.status === 'partial' && r.reason) extra.unshift(`partial: ${r.reason}`);
      if (r.quiet && !r.quiet.quiet) {
        const q = r.quiet;
        const server = q.serverBusyPct !== undefined ? `, the endpoints ${formatNumber(q.serverBusyPct)} %` : '';
        extra.push(
          `not quiet at start: machine ${formatNumber(q.busyPct)} % of a core busy${server} after ${formatNumber(q.waitedS)} s of waiting`,
        );
      }
      if (r.serverCpuS !== undefined) extra.push(`server CPU ${formatNumber(r.serverCpuS)} s`);
      if (extra.length) lines.push(`- ${e.label} / ${r.scenario}: ${extra.join('; ')}`);
    }
    if (e.cleanup) {
      const c = e.cleanup;
      lines.push(
        `- ${e.label}: cleanup: ${formatNumber(c.created)} jobs created, ${formatNumber(c.cleaned)} cleaned, ${formatNumber(c.left)} left${c.note ? ` (${c.note})` : ''}`,
      );
    }
  }
  return lines.length ? ['', '### Notes', '', ...lines] : [];
}

export function renderSingle(report: RunReport): string {
  const e = report.endpoints[0];
  if (e === undefined) return '(no endpoint)\n';
  const rows = ['| scenario | figure | value |', '| --- | --- | --- |'];
  for (const r of e.results) {
    if (r.metrics.length === 0) {
      rows.push(`| ${r.scenario} | | ${cell(statusText(r))} |`);
      continue;
    }
    for (const m of r.metrics) rows.push(`| ${r.scenario} | ${cell(m.label)} | ${cell(valueCell(r, m.key))} |`);
  }
  return [`## ${e.label} benchmark`, '', ...header(report), '', ...rows, ...notesSection(report.endpoints), ''].join(
    '\n',
  );
}

/**
 * Side by side, first endpoint against the second; the ratio column is how many times
 * better the first is (a higher rate, or a lower time or size).
 */
export function renderCompare(report: RunReport): string {
  const eps = report.endpoints;
  if (eps.length < 2) return renderSingle(report);
  const labels = eps.map((e) => e.label);
  const [a, b] = [labels[0] ?? 'first', labels[1] ?? 'second'];
  const rows = [
    `| scenario | figure | ${labels.join(' | ')} | ${a} ÷ ${b} | counts that differ |`,
    `| --- | --- | ${labels.map(() => '---').join(' | ')} | --- | --- |`,
  ];
  for (const name of scenarioOrder(eps)) {
    const results = eps.map((e) => e.results.find((r) => r.scenario === name));
    const diffs = cell(paramDifferences(labels, results));
    const metrics = metricOrder(results);
    if (metrics.length === 0) {
      rows.push(`| ${name} | | ${results.map((r) => cell(statusText(r) || '—')).join(' | ')} | | ${diffs} |`);
      continue;
    }
    metrics.forEach((m, i) => {
      const vals = results.map((r) => r?.metrics.find((x) => x.key === m.key)?.value);
      const [va, vb] = [vals[0], vals[1]];
      const ratio =
        (m.compare ?? m.better !== 'none') && va !== undefined && vb !== undefined
          ? advantage(m.better, va, vb)
          : undefined;
      rows.push(
        `| ${i === 0 ? name : ''} | ${cell(m.label)} | ${results.map((r) => cell(valueCell(r, m.key))).join(' | ')} | ${formatRatio(ratio)} | ${i === 0 ? diffs : ''} |`,
      );
    });
  }
  return [
    `## ${labels.join(' vs ')}`,
    '',
    ...header(report),
    '',
    `Ratio: how many times better ${a} is than ${b} on that figure (higher rate, or lower time or size); medians of the repeats.`,
    '',
    ...rows,
    ...notesSection(eps),
    '',
  ].join('\n');
}
