// The token serves the job: the caller's token stored as its owner's JWT delegation
// (real delegation service, SQLite, files), which is what data staging asks for; one
// delegation per owner, replaced by a longer-lived token and not by a shorter one,
// shared by concurrent submissions, made again when the client deleted it.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CallerTokenDelegations } from '../../../src/auth/token/job-credential.js';
import type { TokenIdentity } from '../../../src/auth/identity.js';
import { makeFixture, type Fixture } from '../../delegations/fixture.js';
import { newKey, sign, type TestKey } from './fixture.js';

const ISS = 'https://issuer.example';

describe('the caller token as the job credential', () => {
  let f: Fixture;
  let key: TestKey;
  const identity = async (sub: string, lifetime: number): Promise<TokenIdentity> => {
    const token = await sign(key, { iss: ISS, sub, exp: lifetime });
    const exp = JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).exp as number;
    return {
      kind: 'token',
      owner: `${ISS}#${sub}`,
      issuer: ISS,
      subject: sub,
      scopes: [],
      groups: [],
      notAfter: new Date(exp * 1000),
      token,
    };
  };
  before(async () => {
    f = await makeFixture();
    key = await newKey();
  });
  after(() => f.close());

  it('stores the token as the owner delegation staging presents, renewed by a longer-lived token only', async () => {
    const d = new CallerTokenDelegations(f.wiring.service);
    const t1 = await identity('alice', 600);
    const id = await d.delegationFor(t1);
    assert.deepEqual(await f.wiring.credentialFor(id, t1.owner), { kind: 'jwt', token: t1.token });
    assert.equal(await f.wiring.credentialFor(id, `${ISS}#bob`), undefined, 'nobody else gets it');
    const t2 = await identity('alice', 1200);
    assert.equal(await d.delegationFor(t2), id);
    assert.deepEqual(await f.wiring.credentialFor(id, t1.owner), { kind: 'jwt', token: t2.token });
    const shorter = await identity('alice', 300);
    assert.equal(await d.delegationFor(shorter), id);
    assert.deepEqual(
      await f.wiring.credentialFor(id, t1.owner),
      { kind: 'jwt', token: t2.token },
      'a shorter-lived token does not replace it',
    );
  });

  it('concurrent submissions of one owner share one delegation; owners have their own', async () => {
    const d = new CallerTokenDelegations(f.wiring.service);
    const ts = await Promise.all([600, 700, 800, 900].map((l) => identity('carol', l)));
    const ids = await Promise.all(ts.map((t) => d.delegationFor(t)));
    assert.equal(new Set(ids).size, 1);
    assert.deepEqual(await f.wiring.credentialFor(ids[0], ts[0]!.owner), { kind: 'jwt', token: ts[3]!.token });
    assert.notEqual(await d.delegationFor(await identity('dave', 600)), ids[0]);
  });

  it('a delegation the client deleted is made again', async () => {
    const d = new CallerTokenDelegations(f.wiring.service);
    const t = await identity('erin', 600);
    const id = await d.delegationFor(t);
    await f.wiring.service.remove(t.owner, id);
    const again = await d.delegationFor(t);
    assert.notEqual(again, id);
    assert.deepEqual(await f.wiring.credentialFor(again, t.owner), { kind: 'jwt', token: t.token });
  });
});
