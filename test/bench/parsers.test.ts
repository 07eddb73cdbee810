import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCurlWriteOut } from '../../bench/harness/curl.js';
import { parseServeOutput } from '../../bench/compare/ceres.js';
import { bulkBody, chunks, idListJson, singleBody } from '../../bench/harness/job-bodies.js';
import { pollIntervalMs } from '../../bench/scenarios/latency.js';
import { drainPollMs } from '../../bench/scenarios/drain.js';
import { newKeyArgs } from '../../bench/raw/baseline.js';
import { keySpecText } from '../../bench/harness/endpoint.js';
import { BenchError } from '../../bench/harness/failures.js';

test('curl write-out: rate from the bytes of the direction and the total time', () => {
  const up = parseCurlWriteOut('200 1073741824 0 2.000000', 'up');
  assert.deepEqual(up, { status: 200, bytes: 2 ** 30, seconds: 2, mibPerS: 512 });
  const down = parseCurlWriteOut('200 0 536870912 0.5\n', 'down');
  assert.equal(down.mibPerS, 1024);
  assert.throws(() => parseCurlWriteOut('000 0 0 0.000', 'up'), BenchError);
  assert.throws(() => parseCurlWriteOut('', 'down'), BenchError);
});

test('ceres serve readiness lines are found among log lines, and only when both are there', () => {
  const log =
    '{"level":30,"msg":"Server listening at https://127.0.0.1:4000"}\nceres: service URL https://localhost:4000/arex\n';
  assert.equal(parseServeOutput(log), undefined);
  const all = `${log}ceres: PKI folder /tmp/x y/state/pki\n{"level":30,"msg":"service started"}\n`;
  assert.deepEqual(parseServeOutput(all), { url: 'https://localhost:4000/arex', pkiDir: '/tmp/x y/state/pki' });
});

test('bulk bodies: multi-xRSL with one + and n parenthesised jobs; ADL in one ActivityDescriptions', () => {
  const x = bulkBody('xrsl', 'trivial', 3, 'p');
  assert.ok(x.startsWith('+(&(executable="/bin/true")(jobname="p-0"))'));
  assert.equal(x.match(/\(&/g)?.length, 3);
  assert.equal(x.match(/\+/g)?.length, 1);
  const a = bulkBody('adl', 'parked', 2, 'q');
  assert.ok(a.startsWith('<ActivityDescriptions><ActivityDescription xmlns="http://www.eu-emi.eu/es/2010/12/adl">'));
  assert.equal(a.match(/<ActivityDescription /g)?.length, 2);
  assert.equal(a.match(/<InputFile><Name>wait.txt<\/Name><\/InputFile>/g)?.length, 2);
  assert.ok(a.endsWith('</ActivityDescriptions>'));
  assert.throws(() => bulkBody('xrsl', 'trivial', 0, 'p'), RangeError);
});

test('parked jobs declare a client-uploaded input; names cannot break out of the description', () => {
  assert.equal(singleBody('xrsl', 'parked', 'a'), '&(executable="/bin/true")(jobname="a")(inputfiles=("wait.txt" ""))');
  assert.equal(
    singleBody('xrsl', 'trivial', 'a") (executable="/bin/sh'),
    '&(executable="/bin/true")(jobname="a----executable---bin-sh")',
  );
  assert.ok(!singleBody('adl', 'trivial', '</Name><x>').includes('<x>'));
});

test('id lists and chunking', () => {
  assert.equal(idListJson(['a', 'b']), '{"job":[{"id":"a"},{"id":"b"}]}');
  assert.equal(idListJson([]), '{"job":[]}');
  assert.deepEqual(chunks([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepEqual(chunks([], 1000), []);
  assert.throws(() => chunks([1], 0), RangeError);
});

test('latency poll interval: 1/20 of the oldest age, within 5 ms .. 500 ms', () => {
  assert.equal(pollIntervalMs(0), 5);
  assert.equal(pollIntervalMs(1000), 50);
  assert.equal(pollIntervalMs(60_000), 500);
  assert.equal(drainPollMs(0), 10);
  assert.equal(drainPollMs(5000), 100);
  assert.equal(drainPollMs(600_000), 1000);
});

test('raw baseline key arguments follow the endpoint key type', () => {
  assert.deepEqual(newKeyArgs({ type: 'rsa', bits: 3072 }), ['-newkey', 'rsa:3072']);
  assert.deepEqual(newKeyArgs({ type: 'ec', curve: 'prime256v1' }), [
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
  ]);
  assert.deepEqual(newKeyArgs({ type: 'ed25519' }), ['-newkey', 'ed25519']);
  assert.equal(keySpecText({ type: 'rsa', bits: 2048 }), 'RSA-2048');
  assert.equal(keySpecText({ type: 'ec', curve: 'prime256v1' }), 'EC prime256v1');
});
