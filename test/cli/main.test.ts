// The `ceres` command loads only the command group asked for (src/cli/main.ts): an
// administrator's command does not wait for the service's modules or the X.509
// library, and help still lists every group.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const GROUPS = ['serve', 'pki', 'admin', 'accounting', 'token', 'info', 'trace'];
/** Modules of the service and of the X.509 library. */
const HEAVY = /\/node_modules\/(fastify|@peculiar\/x509)\/|\/src\/service\/start\.js$/;

describe('the ceres command loads only the group asked for', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-cli-'));
    // A module resolution hook that names every module loaded, on stderr.
    writeFileSync(
      join(dir, 'hooks.mjs'),
      "import { writeSync } from 'node:fs';\n" +
        'export async function resolve(s, c, next) { const r = await next(s, c); writeSync(2, `loaded ${r.url}\\n`); return r; }\n',
    );
    writeFileSync(
      join(dir, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const ceres = (...args: string[]): { code: number | null; stdout: string; loaded: string[]; stderr: string } => {
    const r = spawnSync(process.execPath, ['--import', join(dir, 'register.mjs'), MAIN, ...args], { encoding: 'utf8' });
    const loaded = [...r.stderr.matchAll(/^loaded (\S+)$/gm)].map((m) => m[1] as string);
    return { code: r.status, stdout: r.stdout, stderr: r.stderr.replace(/^loaded \S+\n/gm, ''), loaded };
  };

  it('admin, accounting and token commands load neither the service nor the X.509 library', () => {
    for (const args of [
      ['admin', '--help'],
      ['accounting', '--help'],
      ['token', '--help'],
    ]) {
      const r = ceres(...args);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.loaded.length > 0, 'the hook saw the modules');
      assert.deepEqual(
        r.loaded.filter((u) => HEAVY.test(u)),
        [],
        `ceres ${args.join(' ')}`,
      );
    }
  });

  it('trace, a client of a CE, loads none of the service', () => {
    const r = ceres('trace', '--help');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /--token-file/);
    assert.deepEqual(
      r.loaded.filter((u) => /\/node_modules\/fastify\/|\/src\/(service|api|engine|store)\//.test(u)),
      [],
    );
  });

  it('serve loads the service (what the check above looks for is there)', () => {
    const r = ceres('serve', '--help');
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      r.loaded.some((u) => HEAVY.test(u)),
      'the service modules are loaded for serve',
    );
  });

  it('help, no command and an unknown command list every group', () => {
    for (const args of [['--help'], [], ['help']]) {
      const r = ceres(...args);
      const text = `${r.stdout}${r.stderr}`;
      for (const g of GROUPS) assert.match(text, new RegExp(`^  ${g}\\b`, 'm'), `ceres ${args.join(' ')}: ${g}`);
    }
    const unknown = ceres('nosuch');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /unknown command 'nosuch'/);
    for (const g of GROUPS) assert.match(unknown.stderr, new RegExp(`^  ${g}\\b`, 'm'));
  });

  it('--version and -V print the version of package.json and load no command group', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    for (const flag of ['--version', '-V']) {
      const r = ceres(flag);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${version}\n`);
      assert.deepEqual(
        r.loaded.filter((u) => /\/src\/cli\/(admin|serve-command|pki-command|token-command)/.test(u)),
        [],
      );
    }
  });

  it('a group runs its subcommand: admin config check of a bad file fails naming it', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"listen": "nowhere"}');
    const r = ceres('admin', 'config', 'check', bad);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /listen/);
  });
});
