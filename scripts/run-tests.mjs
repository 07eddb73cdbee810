#!/usr/bin/env node
// Runs the compiled test suite with Node's built-in runner.
// Usage: node scripts/run-tests.mjs [--no-interop] [dir-or-file ...]
// Test files: dist/test/**/*.test.js. Interop tests (the real ARC client) live in
// dist/test/interop and are skipped with --no-interop.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
const noInterop = args.includes('--no-interop');
const roots = args.filter((a) => !a.startsWith('--'));
const files = [];
function walk(p) {
  const st = statSync(p);
  if (st.isDirectory()) {
    for (const n of readdirSync(p).sort()) walk(join(p, n));
  } else if (p.endsWith('.test.js')) {
    if (noInterop && p.includes(`${join('test', 'interop')}`)) return;
    files.push(p);
  }
}
for (const r of roots.length ? roots : ['dist/test']) walk(r);
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
