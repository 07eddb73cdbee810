/**
 * Job description parse rate: descriptions per second through the whole submission
 * path (detect → split/parse → acceptance), for a typical ARC-client ADL, a typical
 * (DIRAC) xRSL, 1 MB descriptions, and 1,000-job bulk bodies.
 *
 * Run after building: node <build>/bench/parse.bench.js [--rounds N] [--ms M]
 * Prints the median over N rounds of M milliseconds each (after one warm-up round).
 */
import { performance } from 'node:perf_hooks';
import { checkAcceptance, type AcceptanceContext } from '../src/jobdesc/check-acceptance.js';
import { splitSubmission } from '../src/jobdesc/split-submission.js';
import { arcClientAdl, bigAdl, bigXrsl, bulkAdl, diracXrsl, richAdl } from '../test/jobdesc/fixtures/samples.js';
import { median, numberArg } from './micro-args.js';

const ctx: AcceptanceContext = {
  queues: [{ name: 'main' }, { name: 'fork' }],
  defaultQueue: 'main',
  runtimeEnvironments: ['ENV/PROXY'],
};

const rounds = numberArg('--rounds', 7);
const roundMs = numberArg('--ms', 300);

let sink = 0;
/** Full submission path for one body; returns the number of descriptions handled. */
function submit(body: Buffer): number {
  const { items } = splitSubmission(body);
  for (const it of items) {
    if (!it.ok) throw new Error(`bench input failed to parse: ${it.reason}`);
    const a = checkAcceptance(it.description, ctx);
    if (!a.ok) throw new Error(`bench input not accepted: ${a.reason}`);
    sink += a.description.arguments.length;
  }
  return items.length;
}

function rate(body: Buffer): number {
  const deadline = performance.now() + roundMs;
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (t < deadline) {
    n += submit(body);
    t = performance.now();
  }
  return (n * 1000) / (t - t0);
}

const cases: Array<[string, string]> = [
  ['ARC client ADL (single)', arcClientAdl],
  ['pyarcrest-style ADL, richer (single)', richAdl],
  ['DIRAC xRSL (single)', diracXrsl],
  ['1 MB xRSL', bigXrsl(1024 * 1024)],
  ['1 MB ADL', bigAdl(1024 * 1024)],
  ['bulk ADL, 1,000 jobs in one body', bulkAdl(1000)],
  [
    'multi-xRSL, 1,000 jobs in one body',
    `+${Array.from({ length: 1000 }, (_, i) => `(${diracXrsl.trim().replace('1c2f6a', `s${i}`)})`).join('')}`,
  ],
];

console.log(`job description parse rate (median of ${rounds} x ${roundMs} ms, Node ${process.version})`);
for (const [name, text] of cases) {
  const body = Buffer.from(text);
  rate(body); // warm-up: JIT, caches
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) rates.push(rate(body));
  const med = median(rates);
  const mb = (body.length / 1024 / 1024).toFixed(body.length > 100_000 ? 1 : 3);
  console.log(
    `${name.padEnd(40)} ${med.toFixed(med < 100 ? 1 : 0).padStart(10)} descriptions/s   (body ${mb} MB, min ${Math.min(...rates).toFixed(1)}, max ${Math.max(...rates).toFixed(1)})`,
  );
}
if (sink < 0) console.log(sink);
