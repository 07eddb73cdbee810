#!/usr/bin/env node
// Rewrites the generated tables in docs/errors.md and docs/configuration.md (after `npm run build`).
import { readFileSync, writeFileSync } from 'node:fs';
const t = await import('../dist/src/tools/doc-tables.js');
for (const [file, table] of [
  ['docs/errors.md', t.errorsTable()],
  ['docs/configuration.md', t.configTable()],
]) {
  writeFileSync(file, t.withTable(readFileSync(file, 'utf8'), table));
  console.log(`updated ${file}`);
}
