// Identities mapped to one local account are one Unix user: the second reads the first's
// delegated credential copy. Sharing a fixed account must be declared (accounts.shared):
// the configuration is refused otherwise, naming the entry, and a grid-mapfile line that
// would share an undeclared account maps nobody. Before, all of these were accepted.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig } from '../../src/config/load.js';
import { configRefusal } from '../helpers/config-refusal.js';
import { AccountMapper } from '../../src/authz/mapping.js';
import { parseGridMapFile } from '../../src/authz/grid-mapfile.js';
import { undeclaredSharing } from '../../src/service/account-checks.js';
import type { AuthzSubject } from '../../src/authz/subject.js';

const groups = [
  { name: 'vo', match: [{ voms: '/atlas' }] },
  { name: 'jane', match: [{ subject: '/O=Site/CN=Jane' }] },
  { name: 'pilot', match: [{ token: { issuer: 'https://iss', subject: 'pilot' } }] },
  { name: 'anyone', match: [{ all: true }] },
];
const cfg = (mapping: unknown[], shared?: string[]) => ({
  authorization: { groups, allow: ['vo', 'jane', 'pilot', 'anyone'] },
  mapping,
  ...(shared ? { accounts: { shared } } : {}),
});
const refusal = configRefusal;

describe('shared fixed accounts in the configuration', () => {
  it('refuses a fixed account for a group that can match several callers, naming the entry and the fix', () => {
    for (const g of ['vo', 'anyone']) {
      const e = refusal(
        cfg([
          { group: 'jane', account: 'janeacct' },
          { group: g, account: 'prd' },
        ]),
      );
      assert.equal(e.key, 'mapping.1.account');
      assert.match(e.message, /fixed account 'prd' would be shared by more than one identity/);
      assert.match(e.message, /accounts\.shared/);
    }
  });

  it('refuses one account named by two entries, even of single-identity groups', () => {
    const e = refusal(
      cfg([
        { group: 'jane', account: 'x' },
        { group: 'pilot', account: 'x' },
      ]),
    );
    assert.equal(e.key, 'mapping.0.account');
  });

  it('refuses an account that is both pooled and fixed, even when declared shared', () => {
    const e = refusal(
      cfg(
        [
          { group: 'vo', pool: { accounts: ['p1', 'p2'] } },
          { group: 'jane', account: 'p2' },
        ],
        ['p2'],
      ),
    );
    assert.equal(e.key, 'mapping.1.account');
    assert.match(e.message, /also in the pool of mapping\.0/);
  });

  it('accepts what is declared, and a fixed account of one certificate or token subject', () => {
    buildConfig(cfg([{ group: 'vo', account: 'prd' }], ['prd']));
    buildConfig(
      cfg([
        { group: 'jane', account: 'janeacct' },
        { group: 'pilot', account: 'pilotacct' },
      ]),
    );
    buildConfig(
      cfg(
        [
          { group: 'jane', account: 'x' },
          { group: 'pilot', account: 'x' },
        ],
        ['x'],
      ),
    );
  });
});

describe('shared accounts of grid-mapfiles', () => {
  let dir: string;
  before(() => (dir = mkdtempSync(join(tmpdir(), 'ceres-shared-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const x509 = (dn: string): AuthzSubject => ({ kind: 'x509', dn, issuerDn: '/CN=CA', fqans: [], parsedFqans: [] });
  const text = '"/CN=a" one\n"/CN=b" one\n"/CN=c" own\n"/CN=d" fixed\n';
  const files = { get: () => parseGridMapFile(text) };
  const leases = { lease: () => undefined };
  const entries = (shared: string[] = []) =>
    buildConfig(
      cfg(
        [
          { group: 'anyone', gridMapFile: '/gm' },
          { group: 'jane', account: 'fixed' },
        ],
        [...shared],
      ),
    ).mapping;

  it('a line whose account other DNs (or a fixed entry) also have maps nobody, with the reason', () => {
    const m = new AccountMapper(entries(), files, leases, []);
    for (const dn of ['/CN=a', '/CN=b', '/CN=d']) {
      const r = m.map(new Set(['anyone']), dn, x509(dn));
      assert.equal(r.ok, false, dn);
      assert.match(!r.ok ? r.reason : '', /not declared shared \(accounts\.shared\)/);
    }
    const own = m.map(new Set(['anyone']), '/CN=c', x509('/CN=c'));
    assert.deepEqual(own, { ok: true, account: 'own', pooled: false });
  });

  it('maps them once the account is declared shared', () => {
    const m = new AccountMapper(entries(), files, leases, ['one', 'fixed']);
    assert.deepEqual(m.map(new Set(['anyone']), '/CN=a', x509('/CN=a')), { ok: true, account: 'one', pooled: false });
    assert.deepEqual(m.map(new Set(['anyone']), '/CN=d', x509('/CN=d')), { ok: true, account: 'fixed', pooled: false });
  });

  it('the start and config check name every undeclared shared account of the files', async () => {
    const gm = join(dir, 'grid-mapfile');
    writeFileSync(gm, text);
    const mapping = [{ gridMapFile: gm }, { account: 'fixed' }];
    const found = await undeclaredSharing(mapping, []);
    assert.equal(found.length, 2);
    assert.match(found[0]!, /^local account one is mapped to 2 DNs of a grid-mapfile:/);
    assert.match(
      found[1]!,
      /^local account fixed is mapped to 1 DN of a grid-mapfile and by a fixed or pool mapping entry/,
    );
    assert.deepEqual(await undeclaredSharing(mapping, ['one', 'fixed']), []);
  });
});
