/**
 * Child of test/process/malloc-trim.test.ts (run with --expose-gc; argument: the
 * helper's folder): fragments the malloc heap on purpose, then trims once and prints
 * the resident set before and after as JSON.
 */
import { readFileSync } from 'node:fs';
import { loadNativeMemory } from '../../src/process/malloc-trim.js';

const rssKiB = (): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN);
const gc = (globalThis as { gc?: () => void }).gc;
const dir = process.argv[2];
if (gc === undefined || dir === undefined) throw new Error('usage: node --expose-gc malloc-fragment.fixture.js DIR');
const native = await loadNativeMemory(dir, 'cc');
if (native === undefined) throw new Error('the native memory helper is unavailable');
// All 2,000 are alive at once (so they lie side by side in the heap); when the function
// returns, the 7 of 8 not kept become garbage.
function fragment(): Buffer[] {
  const all: Buffer[] = [];
  for (let i = 0; i < 2000; i++) all.push(Buffer.alloc(40 * 1024, 1));
  return all.filter((_, i) => i % 8 === 7);
}
const keep = fragment();
for (let i = 0; i < 4; i++) gc();
await new Promise((r) => setTimeout(r, 50));
const beforeKiB = rssKiB();
const held = native.held();
// On its own thread, as the service does it.
if (!native.trimAsync()) throw new Error('a trim is already running');
while (native.lastTrim() < 0) await new Promise((r) => setTimeout(r, 5));
process.stdout.write(JSON.stringify({ beforeKiB, afterKiB: rssKiB(), held, kept: keep.length }));
