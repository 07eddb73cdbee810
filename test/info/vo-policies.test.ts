/** Policies from the authorization configuration, and where the info document publishes them. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { voPolicies } from '../../src/info/vo-policies.js';
import { buildInfoDocument } from '../../src/info/info-document.js';
import type { Config } from '../../src/config/schema.js';
import { all, text, texts } from './tree.js';
import { HOST, snapshot } from './fixtures.js';

const CS = 'Domains/AdminDomain/Services/ComputingService';

const authz: Config['authorization'] = {
  groups: [
    { name: 'atlas', match: [{ voms: '/atlas' }, { voms: '/atlas/Role=production' }] },
    { name: 'cms-prod', match: [{ voms: '/cms/prod' }] },
    { name: 'admins', match: [{ subject: '/O=Site/CN=Admin' }, { all: true }] },
    { name: 'tokens', match: [{ token: { issuer: 'https://iam.example.org/', group: '/dteam' } }] },
  ],
  allow: ['atlas', 'cms-prod', 'admins', 'tokens'],
};

test('endpoints: a vo: rule for each VO a voms rule of an allowed group names, once each', () => {
  const p = voPolicies(authz, [{ name: 'main' }]);
  assert.deepEqual(p.accessRules, ['vo:atlas', 'vo:cms']);
  assert.deepEqual(p.queueVos.get('main'), ['atlas', 'cms']);
});

test('a queue with allow groups advertises only their VOs; a group without voms rules adds none', () => {
  const p = voPolicies(authz, [
    { name: 'grid', allow: ['cms-prod'] },
    { name: 'local', allow: ['admins', 'tokens'] },
  ]);
  assert.deepEqual(p.queueVos.get('grid'), ['cms']);
  assert.deepEqual(p.queueVos.get('local'), []);
});

test('no authorization section, or no allowed group with a voms rule: no policy at all', () => {
  assert.deepEqual(voPolicies(undefined, [{ name: 'main' }]).accessRules, []);
  const p = voPolicies({ ...authz, allow: ['admins'] }, [{ name: 'main' }]);
  assert.deepEqual(p.accessRules, []);
  assert.deepEqual(p.queueVos.get('main'), []);
});

test('the REST document carries the same policies: AccessPolicy per endpoint, a share per VO with its MappingPolicy', () => {
  const doc = buildInfoDocument(
    snapshot({
      accessRules: ['vo:atlas', 'vo:cms'],
      queues: [{ name: 'main', vos: ['atlas', 'cms'] }, { name: 'local' }],
    }),
  );
  const eps = all(doc, `${CS}/ComputingEndpoint`);
  assert.equal(eps.length, 2);
  for (const ep of eps) {
    assert.equal(text(ep, 'AccessPolicy/ID'), `urn:ogf:AccessPolicy:${HOST}:basic`);
    assert.equal(text(ep, 'AccessPolicy/Scheme'), 'basic');
    assert.deepEqual(texts(ep, 'AccessPolicy/Rule'), ['vo:atlas', 'vo:cms']);
  }
  const shares = all(doc, `${CS}/ComputingShare`);
  assert.deepEqual(
    shares.map((s) => [text(s, 'Name'), text(s, 'MappingQueue'), texts(s, 'MappingPolicy/Rule')]),
    [
      ['main', 'main', []],
      ['main_atlas', 'main', ['vo:atlas']],
      ['main_cms', 'main', ['vo:cms']],
      ['local', 'local', []],
    ],
  );
  assert.equal(text(shares[1]!, 'MappingPolicy/ID'), `urn:ogf:MappingPolicy:${HOST}:basic:atlas`);
  assert.equal(text(doc, `${CS}/Complexity`), 'endpoint=2,share=4,resource=1');
});

test('no rules: no AccessPolicy (GLUE2 needs a Rule), no VO shares', () => {
  const doc = buildInfoDocument(snapshot());
  assert.equal(all(doc, `${CS}/ComputingEndpoint/AccessPolicy`).length, 0);
  assert.equal(all(doc, `${CS}/ComputingShare/MappingPolicy`).length, 0);
  assert.equal(all(doc, `${CS}/ComputingShare`).length, 1);
});

test('the LDAP endpoint is published only when the resource BDII is enabled', () => {
  assert.equal(all(buildInfoDocument(snapshot()), `${CS}/ComputingEndpoint`).length, 2);
  const doc = buildInfoDocument(snapshot({ ldap: { url: `ldap://${HOST}:2135/o=glue`, port: 2135 } }));
  const ldap = all(doc, `${CS}/ComputingEndpoint[InterfaceName=org.nordugrid.ldapglue2]`);
  assert.equal(ldap.length, 1);
  assert.equal(text(ldap[0]!, 'URL'), `ldap://${HOST}:2135/o=glue`);
  assert.equal(text(ldap[0]!, 'ID'), `urn:ogf:Endpoint:${HOST}:ldapglue2:2135`);
  assert.equal(all(ldap[0]!, 'JobDescription').length, 0);
});
