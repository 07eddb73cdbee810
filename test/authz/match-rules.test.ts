// Match rules one by one, with the tricky inputs: DNs full of commas, escapes and
// regex metacharacters, FQAN prefixes at group boundaries, token rules against
// certificate callers (and the reverse).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileGlob } from '../../src/authz/glob.js';
import { fqanMatches, parseFqanPattern, type Fqan } from '../../src/auth/voms/fqan.js';
import { compileRule, Groups, type MatchRule } from '../../src/authz/match-rules.js';
import { subjectOfIdentity, subjectKey, type AuthzSubject, type TokenSubject } from '../../src/authz/subject.js';
import type { GridMap } from '../../src/authz/grid-mapfile.js';
import type { X509Identity } from '../../src/auth/identity.js';

const ISSUER = '/DC=org/DC=ceres-test/CN=Test CA';

function identity(dn: string, fqans?: string[], issuerDn = ISSUER): X509Identity {
  return {
    kind: 'x509',
    dn,
    owner: dn,
    issuerDn,
    isProxy: true,
    proxyDepth: 1,
    limited: false,
    notAfter: new Date(Date.now() + 3600_000),
    leafFingerprint: '00',
    ...(fqans
      ? {
          voms: {
            vo: fqans[0]!.split('/')[1]!,
            fqans,
            serverDn: '/CN=voms.example',
            notAfter: new Date(Date.now() + 3600_000),
          },
        }
      : {}),
  };
}
const x509 = (dn: string, fqans?: string[], issuer?: string): AuthzSubject =>
  subjectOfIdentity(identity(dn, fqans, issuer));
const token = (o: Partial<TokenSubject> = {}): TokenSubject => ({
  kind: 'token',
  issuer: 'https://iam.example/',
  subject: 'abc',
  scopes: ['compute.create', 'compute.read'],
  groups: ['/atlas'],
  ...o,
});

const noFiles: { get(p: string): GridMap } = { get: () => ({ accounts: new Map(), sharers: new Map(), problems: [] }) };
const rule = (r: MatchRule, files = noFiles) => compileRule(r, files);

function fq(s: string): Fqan {
  const p = parseFqanPattern(s);
  if (typeof p === 'string') assert.fail(p);
  return p;
}

describe('match rule: subject (exact DN)', () => {
  const dn = '/DC=org/DC=example/O=Acme, Inc./CN=Jane Doe (admin)+serialNumber=42';
  it('matches the exact DN only', () => {
    assert.ok(rule({ subject: dn })(x509(dn)));
    assert.ok(!rule({ subject: dn })(x509(`${dn} `)));
    assert.ok(!rule({ subject: dn })(x509(dn.toLowerCase())));
    assert.ok(!rule({ subject: dn })(x509(`${dn}/CN=proxy`)));
    assert.ok(!rule({ subject: '/DC=org/DC=example' })(x509(dn)), 'no prefix match');
  });
  it('keeps OpenSSL escapes verbatim', () => {
    const esc = '/O=Site/CN=Jos\\xC3\\xA9';
    assert.ok(rule({ subject: esc })(x509(esc)));
    assert.ok(!rule({ subject: '/O=Site/CN=José' })(x509(esc)));
  });
  it('never matches a token caller', () => {
    assert.ok(!rule({ subject: 'abc' })(token({ subject: 'abc' })));
  });
});

describe('match rule: subjectPattern (glob)', () => {
  it('* spans slashes and commas, ? is one character, anchored', () => {
    const m = compileGlob('/DC=org/DC=example/*');
    assert.ok(m('/DC=org/DC=example/O=Acme, Inc./CN=Jane'));
    assert.ok(m('/DC=org/DC=example/'));
    assert.ok(!m('/DC=org/DC=examples/CN=x'));
    assert.ok(!m('X/DC=org/DC=example/CN=x'), 'anchored at the start');
    assert.ok(compileGlob('/O=Site/CN=user??')('/O=Site/CN=user01'));
    assert.ok(!compileGlob('/O=Site/CN=user??')('/O=Site/CN=user001'), 'anchored at the end');
    assert.ok(compileGlob('*CN=robot*')('/O=x/CN=robot: pilot/CN=123'));
  });
  it('regex metacharacters are literal; backslash escapes * and ?', () => {
    assert.ok(compileGlob('/O=a.b/CN=(x)+[y]')('/O=a.b/CN=(x)+[y]'));
    assert.ok(!compileGlob('/O=a.b/CN=x')('/O=aXb/CN=x'));
    assert.ok(compileGlob('/CN=a\\*b')('/CN=a*b'));
    assert.ok(!compileGlob('/CN=a\\*b')('/CN=axxb'));
    assert.ok(compileGlob('/CN=a\\?')('/CN=a?'));
    assert.ok(!compileGlob('/CN=a\\?')('/CN=ab'));
  });
  it('many stars on a long non-matching DN finish quickly (no catastrophic backtracking)', () => {
    const m = compileGlob(`${'*a'.repeat(30)}*b`);
    const t = Date.now();
    assert.ok(!m('a'.repeat(5000)));
    assert.ok(Date.now() - t < 2000);
  });
  it('as a rule: certificate callers only', () => {
    assert.ok(rule({ subjectPattern: '/DC=org/*' })(x509('/DC=org/CN=x')));
    assert.ok(!rule({ subjectPattern: '*' })(token()));
  });
});

describe('match rule: issuer', () => {
  it('matches the issuing CA DN exactly', () => {
    assert.ok(rule({ issuer: ISSUER })(x509('/CN=a')));
    assert.ok(!rule({ issuer: '/DC=org/DC=ceres-test' })(x509('/CN=a')));
    assert.ok(!rule({ issuer: ISSUER })(x509('/CN=a', undefined, '/CN=Other CA')));
    assert.ok(!rule({ issuer: ISSUER })(token({ issuer: ISSUER })));
  });
});

describe('match rule: gridMapFile (membership)', () => {
  const files = {
    get: (p: string): GridMap => ({
      accounts: new Map(p === '/gm' ? [['/O=Site/CN=A, B', 'ab']] : []),
      sharers: new Map(),
      problems: [],
    }),
  };
  it('a DN with a line is a member; others and tokens are not', () => {
    assert.ok(rule({ gridMapFile: '/gm' }, files)(x509('/O=Site/CN=A, B')));
    assert.ok(!rule({ gridMapFile: '/gm' }, files)(x509('/O=Site/CN=A')));
    assert.ok(!rule({ gridMapFile: '/other' }, files)(x509('/O=Site/CN=A, B')));
    assert.ok(!rule({ gridMapFile: '/gm' }, files)(token({ subject: '/O=Site/CN=A, B' })));
  });
});

describe('match rule: voms (FQAN prefix)', () => {
  const m = (pattern: string, ...fqans: string[]) => rule({ voms: pattern })(x509('/CN=u', fqans));
  it('the VO matches every FQAN of the VO, and only by whole group names', () => {
    assert.ok(m('/atlas', '/atlas/Role=NULL/Capability=NULL'));
    assert.ok(m('/atlas', '/atlas/prod/Role=production/Capability=NULL'));
    assert.ok(!m('/atlas', '/atlasx/Role=NULL/Capability=NULL'), '/atlas is not a prefix of /atlasx');
    assert.ok(!m('/atlas', '/cms/atlas/Role=NULL/Capability=NULL'));
    assert.ok(!m('/atlas/prod', '/atlas/production/Role=NULL/Capability=NULL'));
  });
  it('a group matches itself and its subgroups, not its parent', () => {
    assert.ok(m('/atlas/prod', '/atlas/prod/Role=NULL/Capability=NULL'));
    assert.ok(m('/atlas/prod', '/atlas/prod/sub/Role=NULL/Capability=NULL'));
    assert.ok(!m('/atlas/prod', '/atlas/Role=NULL/Capability=NULL'));
  });
  it('a role must be carried exactly; Role=NULL is no role', () => {
    assert.ok(m('/atlas/Role=production', '/atlas/Role=production/Capability=NULL'));
    assert.ok(m('/atlas/Role=production', '/atlas/prod/Role=production/Capability=NULL'));
    assert.ok(!m('/atlas/Role=production', '/atlas/Role=NULL/Capability=NULL'));
    assert.ok(!m('/atlas/Role=production', '/atlas/Role=productionx/Capability=NULL'));
    assert.ok(!m('/atlas/Role=production', '/atlas/Role=pilot/Capability=NULL'));
    assert.ok(m('/atlas/Role=NULL', '/atlas/Role=pilot/Capability=NULL'), 'Role=NULL in a rule constrains nothing');
    assert.ok(m('/atlas/Role=production/Capability=NULL', '/atlas/Role=production/Capability=NULL'));
  });
  it('any FQAN of the proxy may match, not only the primary one', () => {
    assert.ok(m('/atlas/Role=pilot', '/atlas/Role=NULL/Capability=NULL', '/atlas/Role=pilot/Capability=NULL'));
  });
  it('no VOMS attributes, or a token caller: no match', () => {
    assert.ok(!rule({ voms: '/atlas' })(x509('/CN=u')));
    assert.ok(!rule({ voms: '/atlas' })(token({ groups: ['/atlas'] })));
  });
  it('parses FQANs and refuses malformed patterns', () => {
    assert.deepEqual(fq('/atlas/prod/Role=production/Capability=NULL'), {
      groups: ['atlas', 'prod'],
      role: 'production',
    });
    for (const bad of [
      'atlas',
      '/',
      '//atlas',
      '/atlas//prod',
      '/atlas/Role=',
      '/Role=x',
      '/atlas/Role=x/prod',
      '/atlas/Capability=x/Role=y',
      '/atlas/Foo=bar',
    ]) {
      assert.equal(typeof parseFqanPattern(bad), 'string', bad);
    }
    assert.ok(fqanMatches(fq('/atlas'), fq('/atlas')));
  });
});

describe('match rule: token claims', () => {
  it('issuer, and subject/scope/group when given, must all hold', () => {
    const iss = 'https://iam.example/';
    assert.ok(rule({ token: { issuer: iss } })(token()));
    assert.ok(!rule({ token: { issuer: 'https://iam.example' } })(token()), 'issuer compared exactly');
    assert.ok(rule({ token: { issuer: iss, subject: 'abc' } })(token()));
    assert.ok(!rule({ token: { issuer: iss, subject: 'abd' } })(token()));
    assert.ok(rule({ token: { issuer: iss, scope: 'compute.create' } })(token()));
    assert.ok(!rule({ token: { issuer: iss, scope: 'compute.cancel' } })(token()));
    assert.ok(rule({ token: { issuer: iss, group: '/atlas' } })(token()));
    assert.ok(!rule({ token: { issuer: iss, group: '/atlas/prod' } })(token()));
  });
  it('never matches a certificate caller (until bearer tokens exist, nothing)', () => {
    assert.ok(!rule({ token: { issuer: ISSUER } })(x509('/CN=u')));
  });
});

describe('groups', () => {
  it('a caller is in every group one of whose rules matches, in configuration order', () => {
    const g = new Groups(
      {
        groups: [
          { name: 'admins', match: [{ subject: '/O=Site/CN=Admin' }] },
          { name: 'atlas', match: [{ voms: '/atlas' }, { subject: '/O=Site/CN=Other' }] },
          { name: 'everyone', match: [{ all: true }] },
        ],
        allow: ['atlas'],
      },
      noFiles,
    );
    assert.deepEqual(g.of(x509('/O=Site/CN=Admin')), ['admins', 'everyone']);
    assert.deepEqual(g.of(x509('/O=Site/CN=Other')), ['atlas', 'everyone']);
    assert.deepEqual(g.of(x509('/O=Site/CN=u', ['/atlas/Role=NULL/Capability=NULL'])), ['atlas', 'everyone']);
    assert.deepEqual(g.of(token()), ['everyone']);
  });
  it('the decision cache key changes with DN, issuer and FQANs', () => {
    const keys = new Set(
      [x509('/CN=a'), x509('/CN=b'), x509('/CN=a', undefined, '/CN=CA2'), x509('/CN=a', ['/atlas']), token()].map(
        subjectKey,
      ),
    );
    assert.equal(keys.size, 5);
  });
});
