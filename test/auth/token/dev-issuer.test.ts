// The development token issuer: its key made once next to the development PKI and kept,
// its JWK set always matching the key, and `ceres token issue` printing a token alone on
// its line that verifies against that set with the requested claims; refusals for a
// folder without a PKI.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { initDevPki } from '../../../src/pki/dev-pki.js';
import { ensureDevIssuer, issueDevToken } from '../../../src/auth/token/dev-issuer.js';
import { IssuerKeys } from '../../../src/auth/token/issuer-keys.js';
import { verifyToken } from '../../../src/auth/token/verify.js';
import { registerTokenCommands } from '../../../src/cli/token-command.js';
import { removeDir, tempDir } from '../../helpers/service.js';

describe('development token issuer', () => {
  let dir: string;
  let pki: string;
  before(async () => {
    dir = tempDir('dev-issuer');
    pki = (await initDevPki(join(dir, 'pki'))).dir;
  });
  after(() => removeDir(dir));

  it('makes its key once, private, and keeps it; the issuer name follows the key', async () => {
    const a = await ensureDevIssuer(pki);
    const key = readFileSync(a.keyFile, 'utf8');
    assert.equal(statSync(a.keyFile).mode & 0o777, 0o600);
    const b = await ensureDevIssuer(pki);
    assert.equal(b.issuer, a.issuer);
    assert.equal(readFileSync(b.keyFile, 'utf8'), key);
    assert.match(a.issuer, /^https:\/\/ceres-dev\.invalid\/issuer\/[\w-]{16}$/);
    const jwks = JSON.parse(readFileSync(a.jwksFile, 'utf8'));
    assert.equal(jwks.keys.length, 1);
    assert.equal(jwks.keys[0].d, undefined, 'no private part in the key set');
  });

  it('`ceres token issue` prints one token that verifies with the requested claims', async () => {
    let out = '';
    const program = new Command().exitOverride();
    registerTokenCommands(program, (t) => (out += t));
    await program.parseAsync(
      [
        'token',
        'issue',
        '--dir',
        pki,
        '--sub',
        'alice',
        '--scope',
        'compute.read  compute.create',
        '--groups',
        '/vo, /vo/prod',
        '--lifetime',
        '120',
        '--aud',
        'https://ce.example',
      ],
      { from: 'user' },
    );
    assert.match(out, /^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const token = out.trim();
    const iss = await ensureDevIssuer(pki);
    const claims = decodeJwt(token);
    assert.equal(decodeProtectedHeader(token).alg, 'ES256');
    assert.deepEqual(
      [claims.iss, claims.sub, claims.aud, claims.scope, claims['wlcg.groups'], claims['wlcg.ver']],
      [iss.issuer, 'alice', 'https://ce.example', 'compute.read compute.create', ['/vo', '/vo/prod'], '1.0'],
    );
    assert.equal((claims.exp as number) - (claims.iat as number), 120);
    const keys = new IssuerKeys(
      { issuer: iss.issuer, jwksFile: iss.jwksFile },
      { refreshMs: 1000, maxAgeMs: 60_000, getJson: () => Promise.reject(new Error('offline')) },
    );
    const r = await verifyToken(token, {
      issuers: new Map([[iss.issuer, keys]]),
      audiences: () => ['https://ce.example'],
      clockSkewSeconds: 0,
    });
    assert.ok(r.ok, JSON.stringify(r));
  });

  it('defaults to the WLCG any-audience and one hour; refuses a folder without a PKI and a bad lifetime', async () => {
    const claims = decodeJwt(await issueDevToken(pki, { sub: 'bob' }));
    assert.equal(claims.aud, 'https://wlcg.cern.ch/jwt/v1/any');
    assert.equal((claims.exp as number) - (claims.iat as number), 3600);
    assert.equal(claims.scope, undefined);
    await assert.rejects(issueDevToken(join(dir, 'nothing-here'), { sub: 'x' }), /holds no development PKI/);
    const program = new Command().exitOverride().configureOutput({ writeErr: () => undefined });
    program.commands.forEach((c) => c.exitOverride());
    registerTokenCommands(program, () => undefined);
    for (const c of program.commands)
      for (const s of c.commands) s.exitOverride().configureOutput({ writeErr: () => undefined });
    await assert.rejects(
      program.parseAsync(['token', 'issue', '--dir', pki, '--sub', 'x', '--lifetime', '0'], { from: 'user' }),
      /positive whole number/,
    );
  });
});
