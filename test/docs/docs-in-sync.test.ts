// The error catalog and the configuration schema are documented in docs/; these
// tests fail when a code or key is added without regenerating the tables
// (`npm run docs`), and check the catalog's own invariants.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { catalog } from '../../src/errors/catalog.js';
import { configTable, errorsTable, withTable } from '../../src/tools/doc-tables.js';

// Tests run with the repository root as working directory (npm test).
const docText = (f: string): string => readFileSync(`docs/${f}`, 'utf8');

describe('error catalog', () => {
  it('codes are well-formed, statuses are HTTP error codes, messages are one safe line', () => {
    for (const [code, e] of Object.entries(catalog)) {
      assert.match(code, /^CE_ERR_[A-Z0-9_]+$/);
      assert.ok(e.status >= 400 && e.status <= 599, code);
      assert.match(e.message, /^[\x20-\x7e]+$/, code);
    }
  });
  it('docs/errors.md lists exactly the catalog (run `npm run docs`)', () => {
    const doc = docText('errors.md');
    assert.equal(doc, withTable(doc, errorsTable()));
    const documented = new Set(doc.match(/CE_ERR_[A-Z0-9_]+/g) ?? []);
    for (const c of Object.keys(catalog)) assert.ok(documented.has(c), `${c} missing from docs/errors.md`);
    for (const c of documented) assert.ok(c in catalog, `${c} documented but not in the catalog`);
  });
});

describe('configuration reference', () => {
  it('docs/configuration.md documents every key with its default (run `npm run docs`)', () => {
    const doc = docText('configuration.md');
    assert.equal(doc, withTable(doc, configTable()));
  });
});
