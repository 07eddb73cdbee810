// The network rule of docs/architecture.md ("only src/staging moves data over the network") is
// partly an ESLint rule, since the global `fetch` is no import the layer checker could see. This
// runs that rule, as eslint.config.js defines it, on code placed in and out of the allowed folders.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Linter } from 'eslint';
// The project's own ESLint configuration (plain JavaScript at the root, outside the build).
const { networkRule } = (await import(join(process.cwd(), 'eslint.config.js'))) as {
  networkRule: Linter.Config;
};

const config: Linter.Config[] = [
  { files: ['**/*.ts'], languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { fetch: 'readonly' } } },
  networkRule,
];

function ruleHits(file: string, code: string): string[] {
  const linter = new Linter({ configType: 'flat', cwd: process.cwd() });
  return linter.verify(code, config, join(process.cwd(), file)).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the network rule (eslint.config.js networkRule)', () => {
  const calls = "export async function get() { return fetch('https://example.org/'); }";
  const imports = "import { request } from 'undici';\nexport const r = request;";

  it('refuses the global fetch and undici outside data staging', () => {
    for (const file of ['src/jobs/x.ts', 'src/engine/x.ts', 'src/http/x.ts', 'src/lrms/slurm/x.ts', 'src/cli/x.ts']) {
      assert.match(ruleHits(file, calls).join('\n'), /no-restricted-globals: .*src\/staging/, file);
      assert.match(ruleHits(file, imports).join('\n'), /no-restricted-imports: .*src\/staging/, file);
    }
  });

  it('allows them in src/staging, src/messaging, the issuer-key fetch and the trace client', () => {
    for (const file of [
      'src/staging/http/x.ts',
      'src/messaging/x.ts',
      'src/http/https-get-json.ts',
      'src/client/x.ts',
    ]) {
      assert.deepEqual(ruleHits(file, calls), [], file);
      assert.deepEqual(ruleHits(file, imports), [], file);
    }
  });

  it('does not apply outside src (tests and benchmarks fetch freely)', () => {
    assert.deepEqual(ruleHits('test/x.ts', calls), []);
    assert.deepEqual(ruleHits('bench/x.ts', calls), []);
  });
});
