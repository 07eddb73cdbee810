/**
 * `action=status` with 1,000 ids, in process: the handler's steps one by one (id list
 * parse, index lookups, answer rendering the general way and the direct way, the latter
 * written straight into the bytes sent), to say where a call's time goes without the HTTP and TLS around it.
 *
 * Run after building: node <build>/bench/status.bench.js [--ids 1000] [--rounds 9] [--ms 300]
 * Prints the median µs per call of each step over the rounds (after one warm-up round).
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { answerEach, parseIdList } from '../src/api/rest/jobs/id-list.js';
import { renderBulk } from '../src/api/rest/jobs/render.js';
import { statusAnswer } from '../src/api/rest/jobs/status-answer.js';
import { newJobId } from '../src/jobs/job-id.js';
import type { BulkItem } from '../src/jobs/job-actions.js';
import { JobIndex } from '../src/store/job-index.js';

const { values } = parseArgs({
  options: {
    ids: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '9' },
    ms: { type: 'string', default: '300' },
  },
});
const n = Number(values.ids);
const rounds = Number(values.rounds);
const roundMs = Number(values.ms);

const owner = '/DC=org/DC=example/CN=Bench User';
const index = new JobIndex();
const ids = Array.from({ length: n }, () => newJobId());
for (const id of ids) index.set(id, owner, 'FINISHED');
// A store of 100,000 jobs, as the full benchmark has.
for (let i = 0; i < 100_000; i++) index.set(newJobId(), owner, 'RUNNING');
const body = Buffer.from(JSON.stringify({ job: ids.map((id) => ({ id })) }));
// The same list with one more member, which only the general JSON reader takes (json-id-scan.ts).
const generalBody = Buffer.from(body.toString('utf8').replace(/}$/, ',"x":0}'));
const entries = parseIdList(body, 'application/json', 100_000);
const stateOf = (id: string) => index.restStateOwned(id, owner);
const items = (): BulkItem[] =>
  answerEach<BulkItem>(
    entries,
    (xs) =>
      xs.map((id) => {
        const state = stateOf(id);
        return state !== undefined
          ? { status: 200, reason: 'OK', id, state }
          : { status: 404, reason: 'Job not found', id };
      }),
    (reason) => ({ status: 400, reason, id: '' }),
  );

let sink = 0;
const steps: Record<string, () => void> = {
  'id list, general JSON reader (before)': () => (sink += parseIdList(generalBody, 'application/json', 100_000).length),
  'id list, scanned (now)': () => (sink += parseIdList(body, 'application/json', 100_000).length),
  'index lookups only': () => {
    for (const e of entries) if (typeof e === 'string') sink += stateOf(e)?.length ?? 0;
  },
  'lookups + items + renderBulk (before)': () => (sink += renderBulk(items(), 'json').length),
  'lookups + statusAnswer (now)': () => (sink += statusAnswer(entries, stateOf, 'json').length),
  'lookups + statusAnswer, XML': () => (sink += statusAnswer(entries, stateOf, 'xml').length),
};

function measure(f: () => void): number {
  let calls = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < roundMs) {
    f();
    calls++;
    t = performance.now();
  }
  return ((t - t0) * 1000) / calls;
}

const results = new Map<string, number[]>();
for (let r = 0; r <= rounds; r++) {
  for (const [name, f] of Object.entries(steps)) {
    const us = measure(f);
    if (r > 0) results.set(name, [...(results.get(name) ?? []), us]);
  }
}
console.log(
  `action=status steps, ${n} ids (answer ${Math.round(statusAnswer(entries, stateOf, 'json').length / 1024)} KiB), median of ${rounds} rounds:`,
);
for (const [name, us] of results) {
  const s = [...us].sort((a, b) => a - b);
  console.log(`  ${name.padEnd(40)} ${(s[s.length >> 1] as number).toFixed(1).padStart(8)} µs`);
}
if (sink === 0) console.log('');
