// Where `ceres trace` finds the caller's credential (WLCG Bearer Token Discovery, then the
// proxy's places), and what it refuses before any request: nothing found, an expired or
// malformed token, a proxy without its key. No message ever holds a token's text. The uid
// given is one no account has, so the machine's own /tmp/x509up_u<uid> and /tmp/bt_u<uid>
// never count.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';
import { CredentialProblem, findCredential, type Credential } from '../../src/client/credentials.js';
import { initDevPki } from '../../src/pki/dev-pki.js';
import { removeDir, tempDir } from '../helpers/service.js';

const UID = 3_000_000_000 + randomInt(1_000_000);

/** A JWT-shaped token with these claims (unsigned: the client reads claims, the service verifies). */
function jwt(claims: Record<string, unknown>): string {
  const part = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

function problem(f: () => Credential): CredentialProblem {
  try {
    f();
  } catch (e) {
    if (e instanceof CredentialProblem) return e;
    throw e;
  }
  assert.fail('no problem reported');
}

describe('trace credentials: discovery and refusals', () => {
  let dir: string;
  let proxy: string;
  const live = jwt({ iss: 'https://issuer.example', sub: 'alice', scope: 'compute.read', exp: 4_000_000_000 });
  const find = (env: NodeJS.ProcessEnv, tokenFile?: string): Credential => findCredential({ env, uid: UID, tokenFile });

  before(async () => {
    dir = tempDir('trace-creds');
    proxy = (await initDevPki(join(dir, 'pki'))).files.userProxy;
    mkdirSync(join(dir, 'xdg'));
  });
  after(() => removeDir(dir));

  it('takes BEARER_TOKEN over a proxy, and reads its claims', () => {
    const c = find({ BEARER_TOKEN: ` ${live}\n`, X509_USER_PROXY: proxy });
    assert.equal(c.kind, 'token');
    assert.equal(c.kind === 'token' && c.claims.sub, 'alice');
    assert.equal(c.source, 'BEARER_TOKEN');
  });

  it('takes --token-file over BEARER_TOKEN, and BEARER_TOKEN_FILE over a proxy', () => {
    const f = join(dir, 'tok');
    writeFileSync(f, `${live}\n`);
    assert.equal(find({ BEARER_TOKEN: 'x.y.z' }, f).source, `--token-file ${f}`);
    const c = find({ BEARER_TOKEN_FILE: f, X509_USER_PROXY: proxy });
    assert.equal(c.kind, 'token');
    assert.equal(c.kind === 'token' && c.token, live);
  });

  it('takes X509_USER_PROXY over a token left at $XDG_RUNTIME_DIR/bt_u<uid>, which it finds otherwise', () => {
    writeFileSync(join(dir, 'xdg', `bt_u${UID}`), live);
    const p = find({ X509_USER_PROXY: proxy, XDG_RUNTIME_DIR: join(dir, 'xdg') });
    assert.equal(p.kind, 'proxy');
    assert.match(p.kind === 'proxy' ? p.identity : '', /CN=Ceres Dev User$/);
    const t = find({ XDG_RUNTIME_DIR: join(dir, 'xdg') });
    assert.equal(t.kind, 'token');
    assert.equal(t.source, join(dir, 'xdg', `bt_u${UID}`));
  });

  it('nothing found: names every place it looked and both remedies', () => {
    const p = problem(() => find({ XDG_RUNTIME_DIR: join(dir, 'empty') }));
    assert.match(p.message, /no credential found/);
    for (const place of [
      'X509_USER_PROXY',
      `/tmp/x509up_u${UID}`,
      'BEARER_TOKEN_FILE',
      `bt_u${UID}`,
      `/tmp/bt_u${UID}`,
    ])
      assert.ok(p.message.includes(place), place);
    assert.match(p.remedy, /voms-proxy-init/);
    assert.match(p.remedy, /token/);
  });

  it('an expired token is refused with its issuer and expiry, never its text', () => {
    const old = jwt({ iss: 'https://issuer.example', sub: 'bob', exp: 1_000_000 });
    const p = problem(() => find({ BEARER_TOKEN: old }));
    assert.match(p.message, /expired at 1970-01-12T13:46:40Z/);
    assert.match(p.message, /issuer https:\/\/issuer\.example/);
    for (const part of old.split('.')) assert.ok(!p.message.includes(part) && !p.remedy.includes(part));
  });

  it('a token that is not a JWT is refused without echoing it', () => {
    const secret = 'opaque-secret-token-value';
    const p = problem(() => find({ BEARER_TOKEN: secret }));
    assert.match(p.message, /is not a JWT/);
    assert.ok(!p.message.includes(secret));
  });

  it('a token file that cannot be read names the file and the error', () => {
    const p = problem(() => find({ BEARER_TOKEN_FILE: join(dir, 'missing') }));
    assert.match(p.message, /cannot read the token file .*missing \(ENOENT\)/);
  });

  it('a proxy file without its private key is refused', () => {
    const certOnly = join(dir, 'cert-only.pem');
    const pem = readFileSync(proxy, 'utf8');
    writeFileSync(
      certOnly,
      pem.replace(/-----BEGIN [A-Z ]*PRIVATE KEY-----[^-]*-----END [A-Z ]*PRIVATE KEY-----\n?/, ''),
    );
    const p = problem(() => find({ X509_USER_PROXY: certOnly }));
    assert.match(p.message, /holds no private key/);
    assert.match(p.remedy, /voms-proxy-init/);
  });
});
