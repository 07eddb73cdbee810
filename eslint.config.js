// ESLint flat config: typescript-eslint with type information (the project service reads
// tsconfig.json), over the TypeScript in src/, test/, bench/ and the scripts.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The no-unsafe-* family: where values are `any` by nature (see the two blocks below). */
const unsafeAnyOff = Object.fromEntries(
  ['member-access', 'argument', 'assignment', 'call', 'return'].map((r) => [
    `@typescript-eslint/no-unsafe-${r}`,
    'off',
  ]),
);

/**
 * docs/architecture.md: only data staging (src/staging) moves data over the network, besides the
 * token issuers' key fetch (src/http/https-get-json.ts), the messaging client (src/messaging)
 * and the REST client of `ceres trace` (src/client: outside the service, a client of a CE like
 * arcsub; the layer checker keeps the service from importing it).
 * Imports of node:http/https are the layer checker's (.dependency-cruiser.cjs); the global
 * `fetch` (and its relatives) is no import, so this rule is where that part is checked.
 * test/layers/network-rule.test.ts shows that it bites.
 */
export const networkRule = {
  name: 'network-only-in-staging',
  files: ['src/**/*.ts'],
  ignores: ['src/staging/**', 'src/messaging/**', 'src/http/https-get-json.ts', 'src/client/**'],
  rules: {
    'no-restricted-globals': [
      'error',
      ...['fetch', 'WebSocket', 'EventSource', 'XMLHttpRequest'].map((name) => ({
        name,
        message:
          'Only src/staging (and the messaging client, the issuer-key fetch, the trace client) moves data over the network: docs/architecture.md.',
      })),
    ],
    'no-restricted-imports': [
      'error',
      {
        paths: [{ name: 'undici', message: 'HTTP clients belong to src/staging: docs/architecture.md.' }],
        patterns: [{ group: ['undici/*'], message: 'HTTP clients belong to src/staging: docs/architecture.md.' }],
      },
    ],
  },
};

export default defineConfig(
  {
    ignores: [
      'dist/**',
      'coverage/**',
      'node_modules/**',
      'var/**',
      '.tmp/**',
      'bench/results/**',
      '.dependency-cruiser.cjs',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: {
          // The scripts, this file and the layer rules are plain JavaScript outside tsconfig.json.
          allowDefaultProject: ['scripts/*.mjs', 'eslint.config.js', '.dependency-cruiser.cjs'],
        },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Promises: every one is awaited, handled, or dropped on purpose with `void` and a comment.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's test()/describe() return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'it', 'describe', 'suite', 'only', 'skip', 'todo'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrorsIgnorePattern: '^_',
          destructuredArrayIgnorePattern: '^_',
          ignoreRestSiblings: true,
        },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
      eqeqeq: 'error',
      // Rethrowing what a caught error or an abort signal carries is how failures travel here.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // Off: async without await is deliberate (a promise-returning interface; a synchronous
      // throw turned into a rejection); forgotten awaits are caught by no-floating-promises.
      '@typescript-eslint/require-await': 'off',
    },
  },
  networkRule,
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read response bodies as parsed JSON (`any`) and assert on their shape; the
      // assertions are the type check there, and typing every body would only add casts.
      ...unsafeAnyOff,
      '@typescript-eslint/no-explicit-any': 'off',
      // Off: tests match rendered text literally; `\\|  \\|` reads like the table it matches.
      'no-regex-spaces': 'off',
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    rules: {
      // Plain JavaScript has no types to be unsafe about; the promise rules still apply.
      ...unsafeAnyOff,
    },
  },
);
