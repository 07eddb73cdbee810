// Migration 12 on a real database written by the previous schema: owners move to the
// RFC 4514 form. A stored one-line DN converts to exactly the key the same user's
// certificate gives now (so existing jobs keep their owner), a bearer token's owner stays,
// a value that is no one-line DN stays as it was (matching no caller), the one-line form
// is kept for display, and delegations and pool leases follow their owners.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { JobPages } from '../../src/store/job-pages.js';
import { DelegationStore } from '../../src/store/delegation-store.js';
import { encodeName, type DnPart } from '../../src/pki/dn.js';
import { TAG, encodeOid, encodeTlv } from '../../src/pki/der.js';
import { rfc4514Of } from '../../src/pki/rfc4514.js';
import { databaseAtSchema } from '../helpers/old-database.js';
import { makeCa, makeUser, type TestCred } from '../helpers/pki.js';

const dir = mkdtempSync(join(tmpdir(), 'ceres-migr11-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const ALICE = '/O=Ceres Development/OU=x/CN=Alice Müller';
const ALICE_STORED = '/O=Ceres Development/OU=x/CN=Alice M\\xC3\\xBCller';
const MULTI = '/O=Grid/CN=carol+UID=c1';
const TOKEN = 'https://issuer.example/realm#sub-1';
const NOT_A_DN = '/no attribute here';

describe('migration 12: owners keyed on the RFC 4514 form', () => {
  let ca: TestCred;
  let alice: TestCred;
  let carol: TestCred;
  const file = join(dir, 'ceres.db');

  before(async () => {
    ca = await makeCa();
    alice = await makeUser(ca, { dn: ALICE });
    const avas = (o: string, v: string) =>
      encodeTlv(TAG.SEQUENCE, encodeOid(o), encodeTlv(TAG.UTF8_STRING, Buffer.from(v)));
    carol = await makeUser(ca, {
      dn: encodeTlv(
        TAG.SEQUENCE,
        encodeName([{ type: 'O', value: 'Grid' } satisfies DnPart]).subarray(2),
        encodeTlv(TAG.SET, avas('2.5.4.3', 'carol'), avas('0.9.2342.19200300.100.1.1', 'c1')),
      ),
    });
    // The database as the previous release left it: migrations 1-11, jobs of four owners,
    // a delegation and a pool lease of alice.
    databaseAtSchema(file, 11, { id: 'seed', state: 'FINISHED', restState: 'FINISHED' });
    const old = new Database(file);
    const job = old.prepare(
      `INSERT INTO jobs (id, owner, state, pending, rest_state, queue, format, description, raw, created_at, updated_at, reruns_left) VALUES (?, ?, 'INLRMS', 0, 'RUNNING', '', 'xrsl', '{}', 'x', ?, 1, 0)`,
    );
    for (const [i, [id, owner]] of [
      ['alicejob', ALICE_STORED],
      ['caroljob', MULTI],
      ['tokenjob', TOKEN],
      ['oddjob', NOT_A_DN],
    ].entries())
      job.run(id, owner, 10 + i);
    old
      .prepare(
        `INSERT INTO delegations (id, owner, type, cred_file, expires_at, created_at, updated_at) VALUES ('d1', ?, 'x509', 'f', ?, 1, 1)`,
      )
      .run(ALICE_STORED, Date.now() + 3_600_000);
    old
      .prepare(`INSERT INTO account_leases (account, dn, leased_at, last_used) VALUES ('pool01', ?, 1, 1)`)
      .run(ALICE_STORED);
    old.close();
  });

  it("a stored one-line DN converts to exactly its certificate's key: the owner's jobs stay theirs", () => {
    assert.equal(alice.cert.subjectOneline, ALICE_STORED, 'the stored form is what the service stored for alice');
    const db = openDatabase(file);
    try {
      const store = new JobStore(db);
      const aliceKey = rfc4514Of(alice.cert.subject);
      assert.equal(aliceKey, 'CN=Alice M\\C3\\BCller,OU=x,O=Ceres Development');
      assert.deepEqual(store.listByOwner(aliceKey), [{ id: 'alicejob', state: 'RUNNING' }]);
      assert.equal(store.getOwned('alicejob', aliceKey)?.ownerDn, ALICE_STORED);
      assert.equal(store.restStateOwned('alicejob', aliceKey), 'RUNNING');
      const carolKey = rfc4514Of(carol.cert.subject);
      assert.equal(carolKey, 'CN=carol+UID=c1,O=Grid');
      assert.deepEqual(store.listByOwner(carolKey), [{ id: 'caroljob', state: 'RUNNING' }]);
      assert.deepEqual(
        new JobPages(db).page(aliceKey, undefined, undefined, 10).map((r) => [r.id, r.owner]),
        [['alicejob', ALICE_STORED]],
      );
    } finally {
      db.close();
    }
  });

  it('the one-line DN no longer finds the jobs, and a token owner keeps its jobs', () => {
    const db = openDatabase(file);
    try {
      const store = new JobStore(db);
      assert.deepEqual(store.listByOwner(ALICE_STORED), []);
      assert.equal(store.getOwned('alicejob', ALICE_STORED), undefined);
      assert.deepEqual(store.listByOwner(TOKEN), [{ id: 'tokenjob', state: 'RUNNING' }]);
      assert.equal(store.get('tokenjob')?.ownerDn, TOKEN);
    } finally {
      db.close();
    }
  });

  it('an owner that is no one-line DN stays as it was and matches no key a caller can have', () => {
    const db = openDatabase(file);
    try {
      const j = new JobStore(db).get('oddjob');
      assert.equal(j?.owner, NOT_A_DN);
      assert.equal(j?.ownerDn, NOT_A_DN);
    } finally {
      db.close();
    }
  });

  it("alice's delegation and pool lease follow her to the new key", () => {
    const db = openDatabase(file);
    try {
      const aliceKey = rfc4514Of(alice.cert.subject);
      assert.deepEqual(
        new DelegationStore(db).listOffered(aliceKey, Date.now()).map((d) => d.id),
        ['d1'],
      );
      assert.equal(db.prepare('SELECT dn FROM account_leases').pluck().get(), aliceKey);
    } finally {
      db.close();
    }
  });
});
