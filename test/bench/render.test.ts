import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cell,
  formatNumber,
  paramDifferences,
  renderCompare,
  renderSingle,
  scenarioLine,
} from '../../bench/harness/render.js';
import { advantage, type EndpointReport, type RunReport, type ScenarioResult } from '../../bench/harness/results.js';

function result(p: Partial<ScenarioResult> & Pick<ScenarioResult, 'scenario'>): ScenarioResult {
  return { title: p.scenario, status: 'ok', metrics: [], params: {}, notes: [], startedAt: '', seconds: 1, ...p };
}

function endpoint(label: string, results: ScenarioResult[]): EndpointReport {
  return { label, url: `https://${label}/arex`, version: '1.0', pids: [1], serverKey: 'RSA-2048', results };
}

function report(endpoints: EndpointReport[]): RunReport {
  return {
    tool: 'ceres-bench',
    kind: 'compare',
    date: '2026-11-22T00:00:00.000Z',
    commit: 'abc1234',
    machine: { cpu: 'Test CPU', cores: 2, memoryGiB: 24, kernel: '6.1', node: 'v20.0.0', os: 'Linux' },
    quick: false,
    complete: true,
    endpoints,
  };
}

test('formatNumber: separators above 100, about three significant digits below', () => {
  assert.equal(formatNumber(123456.7), '123,457');
  assert.equal(formatNumber(42.25), '42.3');
  assert.equal(formatNumber(4.256), '4.26');
  assert.equal(formatNumber(0.012345), '0.0123');
  assert.equal(formatNumber(0), '0');
  assert.equal(formatNumber(10), '10');
  assert.equal(formatNumber(7), '7');
  assert.equal(formatNumber(Number.NaN), 'n/a');
  assert.equal(formatNumber(Infinity), '∞');
});

test('advantage: higher-is-better divides first by second, lower-is-better the reverse', () => {
  assert.equal(advantage('higher', 1000, 100), 10);
  assert.equal(advantage('lower', 0.5, 60), 120);
  assert.equal(advantage('none', 1, 2), undefined);
  assert.equal(advantage('higher', 5, 0), undefined);
  assert.equal(advantage('lower', 0, 5), undefined);
  assert.equal(advantage('higher', Number.NaN, 5), undefined);
});

test('cells never break the table', () => {
  assert.equal(cell('a | b\nc'), 'a \\| b c');
});

test('compare table: ratio per figure in the right direction, only for comparable figures', () => {
  const ceres = endpoint('Ceres', [
    result({
      scenario: 'bulk-submit',
      metrics: [
        { key: 'jobs_per_s', label: 'jobs/s', value: 5000, unit: 'jobs/s', better: 'higher' },
        { key: 'post_s', label: 'seconds per POST', value: 0.2, unit: 's', better: 'lower', compare: false },
      ],
      params: { jobs: 1000 },
    }),
    result({ scenario: 'latency', metrics: [{ key: 'p50_s', label: 'p50', value: 0.05, unit: 's', better: 'lower' }] }),
  ]);
  const arex = endpoint('A-REX', [
    result({
      scenario: 'bulk-submit',
      metrics: [
        { key: 'jobs_per_s', label: 'jobs/s', value: 250, unit: 'jobs/s', better: 'higher' },
        { key: 'post_s', label: 'seconds per POST', value: 4, unit: 's', better: 'lower', compare: false },
      ],
      params: { jobs: 1000 },
    }),
    result({
      scenario: 'latency',
      metrics: [{ key: 'p50_s', label: 'p50', value: 60, unit: 's', better: 'lower' }],
      params: { jobs: 20 },
    }),
  ]);
  const md = renderCompare(report([ceres, arex]));
  assert.match(md, /\| bulk-submit \| jobs\/s \| 5,000 jobs\/s \| 250 jobs\/s \| 20× \|/);
  assert.match(md, /\|  \| seconds per POST \| 0.200 s \| 4 s \|  \|/);
  assert.match(md, /\| latency \| p50 \| 0.0500 s \| 60 s \| 1,200× \|/);
  assert.match(md, /Ceres ÷ A-REX/);
  assert.match(md, /- commit: abc1234/);
  assert.match(md, /Test CPU, 2 cores, 24 GiB RAM, Linux 6.1, Node v20.0.0/);
});

test('compare table: a failed scenario shows its reason in its cell and no ratio', () => {
  const ceres = endpoint('Ceres', [
    result({
      scenario: 'drain',
      metrics: [{ key: 'jobs_per_s', label: 'jobs/s', value: 900, unit: 'jobs/s', better: 'higher' }],
    }),
  ]);
  const arex = endpoint('A-REX', [
    result({ scenario: 'drain', status: 'failed', reason: 'POST answered HTTP 500 | boom' }),
  ]);
  const md = renderCompare(report([ceres, arex]));
  assert.match(md, /\| drain \| jobs\/s \| 900 jobs\/s \| failed: POST answered HTTP 500 \\\| boom \|  \|/);
});

test('compare table: scenarios failed on every endpoint still get a row; partial and skipped are marked', () => {
  const ceres = endpoint('Ceres', [
    result({ scenario: 'memory', status: 'skipped', reason: 'no pid' }),
    result({
      scenario: 'latency',
      status: 'partial',
      reason: '3 jobs not ended',
      metrics: [{ key: 'p50_s', label: 'p50', value: 1, unit: 's', better: 'lower' }],
    }),
  ]);
  const arex = endpoint('A-REX', [result({ scenario: 'memory', status: 'failed', reason: 'x' })]);
  const md = renderCompare(report([ceres, arex]));
  assert.match(md, /\| memory \| \| skipped: no pid \| failed: x \| \|/);
  assert.match(md, /\| latency \| p50 \| 1 s \(partial\) \| not run \|  \|/);
  assert.match(md, /Ceres \/ latency: partial: 3 jobs not ended/);
});

test('counts that differ between endpoints are listed', () => {
  const a = result({ scenario: 'drain', params: { jobs: 1000, clients: 1 } });
  const b = result({ scenario: 'drain', params: { jobs: 100, clients: 1 } });
  assert.equal(paramDifferences(['Ceres', 'A-REX'], [a, b]), 'jobs: Ceres 1,000, A-REX 100');
  assert.equal(paramDifferences(['Ceres', 'A-REX'], [a, undefined]), '');
});

test('single-endpoint table and notes', () => {
  const e = endpoint('Ceres', [
    result({
      scenario: 'status',
      metrics: [{ key: 'call_s', label: 'seconds per call', value: 0.01, unit: 's', better: 'lower' }],
      notes: ['min 0.009 s'],
      serverCpuS: 0.5,
    }),
    result({ scenario: 'info', status: 'failed', reason: 'HTTP 500' }),
  ]);
  e.cleanup = { created: 10, cleaned: 8, left: 2, note: 'budget' };
  const md = renderSingle({ ...report([e]), kind: 'single' });
  assert.match(md, /\| status \| seconds per call \| 0.0100 s \|/);
  assert.match(md, /\| info \| \| failed: HTTP 500 \|/);
  assert.match(md, /- Ceres \/ status: min 0.009 s; server CPU 0.500 s/);
  assert.match(md, /cleanup: 10 jobs created, 8 cleaned, 2 left \(budget\)/);
});

test('an interrupted run says so in its header', () => {
  const md = renderCompare({ ...report([endpoint('Ceres', []), endpoint('A-REX', [])]), complete: false });
  assert.match(md, /- mode: full; \*\*incomplete run\*\*/);
  assert.doesNotMatch(renderCompare(report([endpoint('Ceres', []), endpoint('A-REX', [])])), /incomplete/);
});

test('a compare report with one endpoint renders as a single table', () => {
  const md = renderCompare(report([endpoint('Ceres', [])]));
  assert.match(md, /## Ceres benchmark/);
});

test('scenario line for the console', () => {
  const ok = result({
    scenario: 'status',
    seconds: 3.2,
    metrics: [{ key: 'k', label: 'ids/s', value: 5000, unit: 'ids/s', better: 'higher' }],
  });
  assert.equal(scenarioLine('Ceres', ok), 'Ceres / status (3.20 s): ids/s 5,000 ids/s');
  assert.equal(
    scenarioLine('A', result({ scenario: 'info', status: 'failed', reason: 'r', seconds: 1.5 })),
    'A / info (1.50 s): failed: r',
  );
});
