import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  defaultCounts,
  endpointArg,
  parseBenchArgs,
  parseCompareArgs,
  parseScenarios,
  SCENARIO_NAMES,
  type BenchOptions,
  type CompareOptions,
} from '../../bench/harness/args.js';
import { BenchError } from '../../bench/harness/failures.js';

const base = ['--endpoint', 'https://127.0.0.1:8443/arex', '--cert', 'c.pem', '--ca', 'ca.pem'];

function bench(argv: string[]): BenchOptions {
  const p = parseBenchArgs(argv);
  assert.equal(p.help, false);
  return (p as { options: BenchOptions }).options;
}

function compare(argv: string[]): CompareOptions {
  const p = parseCompareArgs(argv);
  assert.equal(p.help, false);
  return (p as { options: CompareOptions }).options;
}

function usageError(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof BenchError && e.kind === 'usage' && re.test(e.message));
}

test('minimal command line: all scenarios, full counts, key defaults to the cert (proxy file)', () => {
  const o = bench(base);
  assert.equal(o.endpoint, 'https://127.0.0.1:8443/arex');
  assert.equal(o.key, 'c.pem');
  assert.deepEqual(o.scenarios, [...SCENARIO_NAMES]);
  assert.deepEqual(o.counts, defaultCounts(false));
  assert.equal(o.counts.storeJobs, 100_000);
  assert.equal(o.counts.bulkJobs, 1000);
  assert.equal(o.cleanup, true);
  assert.equal(o.quick, false);
  assert.equal(o.json, undefined);
});

test('--quick scales counts down; explicit counts win over it', () => {
  const q = bench([...base, '--quick']);
  assert.ok(q.counts.storeJobs < 100_000);
  assert.ok(q.counts.mixedSeconds < 60);
  assert.ok(q.budgetS < bench(base).budgetS);
  const o = bench([...base, '--quick', '--store-jobs', '2_000', '--mixed-seconds', '5']);
  assert.equal(o.counts.storeJobs, 2000);
  assert.equal(o.counts.mixedSeconds, 5);
});

test('explicit key, json, pids, label, format, state filter, no-cleanup', () => {
  const o = bench([
    ...base,
    '--key',
    'k.pem',
    '--json',
    'out.json',
    '--pid',
    '12,34',
    '--label',
    'X',
    '--format',
    'adl',
    '--state-filter',
    'FINISHED,FAILED',
    '--no-cleanup',
  ]);
  assert.equal(o.key, 'k.pem');
  assert.equal(o.json, 'out.json');
  assert.deepEqual(o.pids, [12, 34]);
  assert.equal(o.label, 'X');
  assert.equal(o.format, 'adl');
  assert.equal(o.counts.stateFilter, 'FINISHED,FAILED');
  assert.equal(o.cleanup, false);
  assert.equal(o.counts.storeKind, 'killed');
  assert.equal(bench([...base, '--store-kind', 'parked']).counts.storeKind, 'parked');
  usageError(() => parseBenchArgs([...base, '--store-kind', 'x']), /--store-kind is killed or parked/);
});

test('--help needs nothing else', () => {
  assert.deepEqual(parseBenchArgs(['--help']), { help: true });
  assert.deepEqual(parseCompareArgs(['-h']), { help: true });
});

test('missing required options are named', () => {
  usageError(() => parseBenchArgs(['--cert', 'c', '--ca', 'a']), /--endpoint is required/);
  usageError(() => parseBenchArgs(['--endpoint', 'https://h/arex', '--ca', 'a']), /--cert is required/);
  usageError(() => parseBenchArgs(['--endpoint', 'https://h/arex', '--cert', 'c']), /--ca is required/);
});

test('unknown options and stray arguments are refused', () => {
  usageError(() => parseBenchArgs([...base, '--bogus']), /bogus/);
  usageError(() => parseBenchArgs([...base, 'extra']), /extra|positional/i);
  usageError(() => parseCompareArgs(['--endpoint', 'x']), /endpoint/);
});

test('bad numbers are refused with the option name', () => {
  usageError(() => parseBenchArgs([...base, '--bulk-jobs', '0']), /--bulk-jobs must be at least 1/);
  usageError(() => parseBenchArgs([...base, '--bulk-jobs', '-5']), /bulk-jobs/);
  usageError(() => parseBenchArgs([...base, '--bulk-jobs', '1e3']), /--bulk-jobs needs a whole number/);
  usageError(() => parseBenchArgs([...base, '--pid', 'abc']), /--pid needs a whole number/);
  usageError(() => parseBenchArgs([...base, '--budget', '']), /--budget needs a whole number/);
  // 0 is allowed where it means "none"
  assert.equal(bench([...base, '--quiet-wait', '0']).quietWaitS, 0);
  assert.equal(bench([...base, '--latency-gap-ms', '0']).counts.latencyGapMs, 0);
});

test('bad format and state filter are refused', () => {
  usageError(() => parseBenchArgs([...base, '--format', 'json']), /--format is xrsl or adl/);
  usageError(() => parseBenchArgs([...base, '--state-filter', 'finished; rm']), /--state-filter/);
});

test('scenario selection: comma lists, repeats, all, run order kept, unknown refused', () => {
  assert.deepEqual(parseScenarios(['memory,status']), ['status', 'memory']);
  assert.deepEqual(parseScenarios(['transfer', 'bulk-submit']), ['bulk-submit', 'transfer']);
  assert.deepEqual(parseScenarios(['all']), [...SCENARIO_NAMES]);
  assert.deepEqual(parseScenarios(undefined), [...SCENARIO_NAMES]);
  usageError(() => parseScenarios(['status,nope']), /unknown scenario 'nope'/);
  assert.deepEqual(bench([...base, '--scenario', 'info', '--scenario', 'status']).scenarios, ['status', 'info']);
});

test('endpoint URL: https only, trailing slash and a REST suffix removed', () => {
  assert.equal(endpointArg('endpoint', 'https://h:8443/arex/'), 'https://h:8443/arex');
  assert.equal(endpointArg('endpoint', 'https://h:8443/arex/rest/1.0'), 'https://h:8443/arex');
  assert.equal(endpointArg('endpoint', 'https://h:8443/arex/rest'), 'https://h:8443/arex');
  assert.equal(endpointArg('endpoint', 'https://h'), 'https://h');
  usageError(() => endpointArg('endpoint', 'http://h/arex'), /must be an https:\/\/ URL/);
  usageError(() => endpointArg('endpoint', 'h:8443/arex'), /https|not a URL/);
  usageError(() => endpointArg('endpoint', 'not a url'), /not a URL/);
  usageError(() => endpointArg('endpoint', 'https://h/arex?x=1'), /query/);
});

test('compare: A-REX defaults, fewer drain jobs for A-REX, overrides', () => {
  const o = compare([]);
  assert.equal(o.arexEndpoint, 'https://127.0.0.1:8444/arex');
  assert.equal(o.arexKey, o.arexCert);
  assert.equal(o.arexCounts.drainJobs, 100);
  assert.equal(o.arexCounts.storeJobs, 20_000);
  assert.equal(o.counts.storeJobs, 100_000);
  assert.equal(compare(['--quick']).arexCounts.storeJobs, 10_000);
  assert.equal(compare(['--store-jobs', '5000']).arexCounts.storeJobs, 5000);
  assert.equal(o.counts.drainJobs, 1000);
  assert.equal(o.withArex, false);
  assert.equal(o.outDir, 'bench/results');
  assert.equal(compare(['--quick']).arexCounts.drainJobs, 50);
  const p = compare([
    '--with-arex',
    '--arex-endpoint',
    'https://127.0.0.1:9443/arex',
    '--arex-store-jobs',
    '5000',
    '--arex-drain-jobs',
    '10',
    '--out-dir',
    'x',
  ]);
  assert.equal(p.withArex, true);
  assert.equal(p.arexEndpoint, 'https://127.0.0.1:9443/arex');
  assert.deepEqual(p.arexCounts, { drainJobs: 10, storeJobs: 5000, storeKind: 'parked' });
  assert.equal(compare(['--arex-store-kind', 'killed']).arexCounts.storeKind, 'killed');
  usageError(() => parseCompareArgs(['--arex-store-kind', 'dead']), /--arex-store-kind is killed or parked/);
  assert.equal(p.outDir, 'x');
});

test('delegation counts: requests at least 1, the gap may be 0', () => {
  const o = bench([...base, '--scenario', 'delegation', '--delegation-requests', '5', '--delegation-gap-ms', '0']);
  assert.deepEqual(o.scenarios, ['delegation']);
  assert.equal(o.counts.delegationRequests, 5);
  assert.equal(o.counts.delegationGapMs, 0);
  assert.ok(bench([...base, '--quick']).counts.delegationRequests < defaultCounts(false).delegationRequests);
  usageError(() => parseBenchArgs([...base, '--delegation-requests', '0']), /--delegation-requests must be at least 1/);
  usageError(
    () => parseBenchArgs([...base, '--delegation-gap-ms', 'soon']),
    /--delegation-gap-ms needs a whole number/,
  );
});
