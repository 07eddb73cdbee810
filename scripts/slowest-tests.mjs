#!/usr/bin/env node
// Prints the slowest test files of the last run (scripts/run-tests.mjs writes their durations
// to dist/test-durations.json). Usage: node scripts/slowest-tests.mjs [N]  (default 10)
import { readFileSync } from 'node:fs';

const n = Number(process.argv[2] ?? 10);
let durations;
try {
  durations = JSON.parse(readFileSync('dist/test-durations.json', 'utf8'));
} catch {
  console.error('no durations yet: run the tests first (node scripts/run-tests.mjs)');
  process.exit(1);
}
const all = Object.entries(durations).sort((a, b) => b[1] - a[1]);
const sum = all.reduce((s, [, ms]) => s + ms, 0);
for (const [file, ms] of all.slice(0, n)) console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`);
console.log(`${(sum / 1000).toFixed(1).padStart(7)} s  all ${all.length} files one after the other`);
