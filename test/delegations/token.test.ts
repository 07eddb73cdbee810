// The sanity checks on a delegated token (it is stored unverified, as the spec says).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkDelegatedToken } from '../../src/delegations/jwt/token.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { fakeJwt } from './fixture.js';

const now = Date.now();

function refusal(token: string, max = 8192): { code: string; message: string } {
  try {
    checkDelegatedToken(token, max, now);
  } catch (e) {
    if (isCeError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('accepted');
}

describe('checkDelegatedToken', () => {
  it('accepts a compact JWS and takes its exp as the expiry', () => {
    const exp = Math.floor(now / 1000) + 600;
    assert.deepEqual(checkDelegatedToken(fakeJwt({ exp }), 8192, now).expiresAt, exp * 1000);
    assert.equal(checkDelegatedToken(fakeJwt({ exp: undefined }), 8192, now).expiresAt, undefined);
    const unsigned = fakeJwt().replace(/\.[^.]*$/, '.');
    assert.equal(
      checkDelegatedToken(unsigned, 8192, now).token,
      unsigned,
      'an empty signature part is syntactically fine: not verified here',
    );
  });

  it('refuses what is not a JWT, without quoting it', () => {
    const b = (s: string): string => Buffer.from(s).toString('base64url');
    for (const t of [
      'secret-garbage',
      'a.b',
      'a.b.c.d',
      `${b('{"alg":"RS256"}')}.${b('not json')}.x`,
      `${b('null')}.${b('{}')}.x`,
      `${b('{"alg":""}')}.${b('{}')}.x`,
      `${b('{"alg":"RS256"}')}.${b('{"exp":"soon"}')}.x`,
      `${b('{"alg":"RS256"}')}.${b('{}')}.x y`,
      'Ω.Ω.Ω',
    ]) {
      const r = refusal(t);
      assert.equal(r.code, 'CE_ERR_DELEG_TOKEN_MALFORMED', t);
      assert.ok(!r.message.includes(t), 'not echoed');
    }
  });

  it('refuses an expired token and one over the size bound', () => {
    assert.equal(refusal(fakeJwt({ exp: Math.floor(now / 1000) - 1 })).code, 'CE_ERR_DELEG_EXPIRED');
    assert.equal(
      refusal(fakeJwt({ exp: -1e300 })).code,
      'CE_ERR_DELEG_EXPIRED',
      'absurd dates do not crash the message',
    );
    assert.equal(refusal(fakeJwt({ pad: 'x'.repeat(400) }), 256).code, 'CE_ERR_DELEG_TOKEN_TOO_LARGE');
  });
});
