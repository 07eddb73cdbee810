// Tokens through the authorization groups (real service): a token without compute
// scopes is authorized by its groups (`wlcg.groups`) through `token` match rules and
// mapped to a local account like a certificate caller; a scoped token is still subject
// to the groups when they are configured; tokens in no allowed group are refused.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { initDevPki } from '../../src/pki/dev-pki.js';
import { ensureDevIssuer, issueDevToken } from '../../src/auth/token/dev-issuer.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';

const JOB = '&(executable="/bin/true")';

const UNTRUSTED = 'https://issuer.untrusted.example.org';

describe('tokens and authorization groups (real service)', () => {
  let stateDir: string;
  let pkiDir: string;
  let issuer: string;
  let ceres: RunningCeres;
  const clients: Client[] = [];
  const as = async (sub: string, o: { scope?: string; groups?: string[] } = {}): Promise<Client> => {
    const c = Client.withToken(ceres, await issueDevToken(pkiDir, { sub, ...o }));
    clients.push(c);
    return c;
  };
  const accountOf = (owner: string): (string | null)[] => {
    const db = new Database(join(stateDir, 'ceres.db'), { readonly: true });
    try {
      return (
        db.prepare('SELECT local_account FROM jobs WHERE owner = ?').all(owner) as { local_account: string | null }[]
      ).map((r) => r.local_account);
    } finally {
      db.close();
    }
  };

  const fqansOf = (owner: string): unknown[] => {
    const db = new Database(join(stateDir, 'ceres.db'), { readonly: true });
    try {
      return (db.prepare('SELECT fqans FROM jobs WHERE owner = ?').all(owner) as { fqans: string | null }[]).map((r) =>
        r.fqans === null ? null : JSON.parse(r.fqans),
      );
    } finally {
      db.close();
    }
  };

  before(async () => {
    stateDir = tempDir('tokens-authz');
    pkiDir = (await initDevPki(join(stateDir, 'pki'))).dir;
    issuer = (await ensureDevIssuer(pkiDir)).issuer;
    ceres = await startCeres({
      stateDir,
      config: {
        authorization: {
          groups: [
            { name: 'cms', match: [{ token: { issuer, group: '/cms' } }] },
            { name: 'pilots', match: [{ token: { issuer, subject: 'pilot', scope: 'compute.read' } }] },
            { name: 'scoped', match: [{ token: { issuer, subject: 'unmapped' } }] },
            // A rule naming an issuer the site does not trust: warned about at start.
            { name: 'elsewhere', match: [{ token: { issuer: UNTRUSTED, group: '/x' } }] },
          ],
          allow: ['cms', 'pilots'],
        },
        mapping: [
          { group: 'cms', pool: { accounts: ['cms001', 'cms002'] } },
          { group: 'pilots', account: 'pilotacct' },
        ],
      },
    });
  });
  after(async () => {
    for (const c of clients) await c.close();
    await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('a token rule whose issuer is not in tokens.issuers is named in a start-up warning; rules of trusted issuers are not', async () => {
    // docs/operations.md, "Certificates": "A start-up warning names `token` authorization
    // rules whose issuer is not trusted."
    const warned = (): { group: string; issuer: string }[] =>
      ceres
        .output()
        .split('\n')
        .filter((l) => l.includes('a token match rule names an issuer not in tokens.issuers'))
        .map((l) => JSON.parse(l) as { group: string; issuer: string; level: number });
    await until(() => warned().length > 0, 'the warning');
    assert.deepEqual(
      warned().map((w) => [w.group, w.issuer]),
      [['elsewhere', UNTRUSTED]],
    );
  });

  it('a token without scopes is authorized by its group and mapped to a pool account per owner', async () => {
    const alice = await as('alice', { groups: ['/cms', '/cms/uscms'] });
    const bob = await as('bob', { groups: ['/cms'] });
    assert.equal((await alice.req('GET', '/rest/1.1/jobs')).status, 200);
    const [a] = await alice.submit(JOB);
    const [b] = await bob.submit(JOB);
    assert.equal(a['status-code'], '201');
    assert.equal(b['status-code'], '201');
    const accounts = [accountOf(`${issuer}#alice`)[0], accountOf(`${issuer}#bob`)[0]];
    assert.deepEqual([...accounts].sort(), ['cms001', 'cms002']);
    // The job keeps the token's groups as its VO attributes: accounting takes its VO
    // (cms) and VO group from them, as from a VOMS proxy's FQANs, with no map to keep.
    assert.deepEqual(fqansOf(`${issuer}#alice`), [['/cms', '/cms/uscms']]);
  });

  it('a token whose groups no rule admits is refused (403), as is a certificate caller', async () => {
    const atlas = await as('carol', { groups: ['/atlas'] });
    const r = await atlas.req('GET', '/rest/1.1/jobs');
    assert.equal(r.status, 403);
    assert.match(r.text, /CE_ERR_AUTHZ_NOT_ALLOWED/);
    const cert = Client.forUser(ceres);
    clients.push(cert);
    assert.equal((await cert.req('GET', '/rest/1.1/jobs')).status, 403);
  });

  it('a scoped token is authorized by its scopes and still needs an allowed group; it is mapped the same way', async () => {
    const pilot = await as('pilot', { scope: 'compute.read compute.create' });
    const [j] = await pilot.submit(JOB);
    assert.equal(j['status-code'], '201');
    assert.deepEqual(accountOf(`${issuer}#pilot`), ['pilotacct']);
    const readOnly = await as('pilot', { scope: 'compute.read' });
    const r = await readOnly.req('POST', '/rest/1.1/jobs?action=new', JOB);
    assert.equal(r.status, 403);
    assert.match(String(r.headers['www-authenticate']), /insufficient_scope/);
    // Matches a group, but not an allowed one.
    const unmapped = await as('unmapped', { scope: 'compute.read' });
    assert.equal((await unmapped.req('GET', '/rest/1.1/jobs')).status, 403);
  });
});
