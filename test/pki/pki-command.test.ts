import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { registerPkiCommands } from '../../src/cli/pki-command.js';
import { PkiError } from '../../src/pki/pki-error.js';
import { tempDir } from '../helpers/pki.js';

/** Run `ceres <args>` in-process, capturing what the command prints. */
async function ceres(...args: string[]): Promise<string> {
  const program = new Command()
    .name('ceres')
    .exitOverride()
    .configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  let out = '';
  registerPkiCommands(program, (t) => (out += t));
  await program.parseAsync(['node', 'ceres', ...args]);
  return out;
}

const root = tempDir(after, 'ceres-pkicli-');

describe('ceres pki', () => {
  const dir = join(root, 'pki');

  it('init writes the PKI and prints the identities and every file written', async () => {
    const out = await ceres('pki', 'init', '--dir', dir, '--hostname', 'ce.example.org');
    assert.match(out, /^Development PKI written to /);
    assert.match(out, /CA {4}\/O=Ceres Development\/OU=[0-9a-f]{8}\/CN=Ceres Development CA/);
    assert.match(out, /user {2}\/O=Ceres Development\/OU=[0-9a-f]{8}\/CN=Ceres Dev User/);
    for (const f of [
      'ca.pem',
      'cakey.pem',
      'hostcert.pem',
      'hostkey.pem',
      'usercert.pem',
      'userkey.pem',
      'userproxy.pem',
    ]) {
      assert.ok(out.includes(join(dir, f)), `${f} is listed`);
      assert.ok(existsSync(join(dir, f)));
    }
    assert.match(out, /certificates\/[0-9a-f]{8}\.0/);
    assert.match(out, /certificates\/[0-9a-f]{8}\.signing_policy/);
    assert.match(out, /X509_CERT_DIR=/);
    assert.ok(!/BEGIN/.test(out), 'no key or certificate material is printed');
  });

  it('init refuses an existing PKI, and --force replaces it', async () => {
    const ca = readFileSync(join(dir, 'ca.pem'), 'utf8');
    await assert.rejects(
      ceres('pki', 'init', '--dir', dir),
      (e: unknown) => e instanceof PkiError && /already holds a PKI/.test(e.message),
    );
    await ceres('pki', 'init', '--dir', dir, '--force');
    assert.notEqual(readFileSync(join(dir, 'ca.pem'), 'utf8'), ca);
  });

  it('user NAME adds NAME-cert.pem, NAME-key.pem and NAME-proxy.pem', async () => {
    const out = await ceres('pki', 'user', 'bob', '--dir', dir);
    assert.match(out, /^User \/O=Ceres Development\/OU=[0-9a-f]{8}\/CN=bob\n/);
    for (const f of ['bob-cert.pem', 'bob-key.pem', 'bob-proxy.pem'])
      assert.ok(out.includes(join(dir, f)) && existsSync(join(dir, f)), f);
    await assert.rejects(ceres('pki', 'user', 'bob', '--dir', dir), /already exists/);
    await assert.rejects(ceres('pki', 'user', 'no/slash', '--dir', dir), /user name is 1-64 characters/);
  });

  it('requires --dir', async () => {
    await assert.rejects(ceres('pki', 'init'), /required option '--dir <dir>' not specified/);
  });
});
