/**
 * The LDIF rendering of the info document: DN and value escaping (RFC 4514, RFC 2849,
 * and what bdii-update parses), the mapping onto the GLUE2 LDAP schema, and what is
 * refused with a reason. Loading into a real slapd: glue2-ldif-slapd.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { el, type XmlElement } from '../../src/doc/element.js';
import { buildInfoDocument } from '../../src/info/info-document.js';
import { renderGlue2Ldif, RESOURCE_BASE_DN } from '../../src/info/glue2-ldif.js';
import { dnOf, escapeDnValue, ldifLine } from '../../src/info/ldif-text.js';
import { GLUE2_LDAP_CLASSES, GLUE2_LDAP_INTEGERS, GLUE2_LDAP_MULTI_VALUED } from '../../src/info/glue2-ldap-schema.js';
import { HOST, snapshot, URL } from './fixtures.js';

const SERVICE_DN = `GLUE2ServiceID=urn:ogf:ComputingService:${HOST}:arex,${RESOURCE_BASE_DN}`;

const rich = snapshot({
  accessRules: ['vo:atlas', 'vo:ops'],
  ldap: { url: `ldap://${HOST}:2135/o=glue`, port: 2135 },
  runtimeEnvironments: [{ name: 'ENV/PROXY' }, { name: 'APPS/HEP/ATLAS-1.0', description: 'Athena' }],
  queues: [{ name: 'main', vos: ['atlas'], maxWallTimeSeconds: 3600 }, { name: 'long' }],
});

function entry(text: string, dn: string): string {
  const found = text.split('\n\n').find((e) => e.startsWith(`dn: ${dn}\n`));
  assert.ok(found !== undefined, `no entry ${dn} in\n${text}`);
  return found;
}

test('DN values: RFC 4514 specials escaped, non-ASCII and controls as hex pairs, never "dn:"', () => {
  assert.equal(
    escapeDnValue('urn:ogf:ComputingShare:ce.example.org:main'),
    'urn:ogf:ComputingShare:ce.example.org:main',
  );
  assert.equal(escapeDnValue('a,b+c"d\\e<f>g;h=i'), 'a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h\\=i');
  assert.equal(escapeDnValue('#lead'), '\\#lead');
  assert.equal(escapeDnValue(' both '), '\\ both\\ ');
  assert.equal(escapeDnValue('mid # and space'), 'mid # and space');
  assert.equal(escapeDnValue('grüße'), 'gr\\C3\\BC\\C3\\9Fe');
  assert.equal(escapeDnValue('two\nlines\0'), 'two\\0Alines\\00');
  // bdii-update finds entries by the text "dn:": a host ending in "dn" must not make one.
  assert.equal(escapeDnValue('urn:ogf:ComputingService:my.cdn:arex'), 'urn:ogf:ComputingService:my.cdn\\3Aarex');
  assert.equal(
    dnOf([
      ['GLUE2ShareID', 'q,1'],
      ['o', 'glue'],
    ]),
    'GLUE2ShareID=q\\,1,o=glue',
  );
});

test('LDIF values: plain when RFC 2849 allows it, else base64 (multi-line, non-ASCII, edges, "dn:")', () => {
  assert.equal(ldifLine('GLUE2EntityName', 'main'), 'GLUE2EntityName: main');
  assert.equal(ldifLine('GLUE2EndpointURL', URL), `GLUE2EndpointURL: ${URL}`);
  const b64 = (v: string): string => `GLUE2ShareDescription:: ${Buffer.from(v, 'utf8').toString('base64')}`;
  for (const v of [
    'two\nlines',
    'cr\rhere',
    ' leading space',
    'trailing space ',
    ':colon first',
    '<angle first',
    'grüße',
  ])
    assert.equal(ldifLine('GLUE2ShareDescription', v), b64(v), JSON.stringify(v));
  assert.equal(ldifLine('GLUE2ShareDescription', 'see dn: here'), b64('see dn: here'));
  assert.equal(
    ldifLine('GLUE2ShareDescription', 'inner: colon and < are fine'),
    'GLUE2ShareDescription: inner: colon and < are fine',
  );
});

test('the tree: o=glue, the resource group, the domain and the service beside it, entities below', () => {
  const r = renderGlue2Ldif(buildInfoDocument(rich));
  assert.deepEqual(r.problems, []);
  const dns = r.entries.map((e) => e.dn);
  assert.equal(dns[0], 'o=glue');
  assert.equal(dns[1], RESOURCE_BASE_DN);
  assert.ok(dns.includes(`GLUE2DomainID=urn:ad:testsite,${RESOURCE_BASE_DN}`));
  assert.ok(dns.includes(SERVICE_DN));
  // Parents before children (ldapadd needs them first).
  const seen = new Set<string>();
  for (const dn of dns) {
    const parent = dn.slice(dn.search(/(?<!\\),/) + 1);
    if (dn !== 'o=glue') assert.ok(seen.has(parent), `${dn} comes before its parent`);
    seen.add(dn);
  }
  const rest = r.entries.filter((e) => e.attrs.get('GLUE2EndpointInterfaceName')?.[0] === 'org.nordugrid.arcrest');
  assert.deepEqual(
    rest.map((e) => [e.attrs.get('GLUE2EndpointInterfaceVersion'), e.attrs.get('GLUE2EndpointURL')]),
    [
      [['1.0'], [URL]],
      [['1.1'], [URL]],
    ],
  );
  const ldap = r.entries.find((e) => e.attrs.get('GLUE2EndpointInterfaceName')?.[0] === 'org.nordugrid.ldapglue2');
  assert.deepEqual(ldap?.attrs.get('GLUE2EndpointURL'), [`ldap://${HOST}:2135/o=glue`]);
  // One AccessPolicy under each endpoint, with the VO rules; one MappingPolicy under the VO share.
  const access = r.entries.filter((e) => e.attrs.get('objectClass')?.includes('GLUE2AccessPolicy'));
  assert.equal(access.length, 3);
  for (const a of access) assert.deepEqual(a.attrs.get('GLUE2PolicyRule'), ['vo:atlas', 'vo:ops']);
  const mapping = r.entries.filter((e) => e.attrs.get('objectClass')?.includes('GLUE2MappingPolicy'));
  assert.deepEqual(
    mapping.map((m) => [m.attrs.get('GLUE2PolicyRule'), m.attrs.get('GLUE2MappingPolicyShareForeignKey')]),
    [[['vo:atlas'], [`urn:ogf:ComputingShare:${HOST}:main_atlas`]]],
  );
  const share = entry(r.text, `GLUE2ShareID=urn:ogf:ComputingShare:${HOST}:main_atlas,${SERVICE_DN}`);
  assert.match(share, /^GLUE2ComputingShareMappingQueue: main$/m);
  assert.match(share, /^GLUE2ComputingShareMaxWallTime: 3600$/m);
  assert.doesNotMatch(share, /TotalJobs/, 'a VO share has no job counters: Ceres does not count per VO');
  assert.match(r.text, /^GLUE2ApplicationEnvironmentAppName: APPS\/HEP\/ATLAS$/m);
});

test('containment and associations become the foreign keys of the LDAP schema', () => {
  const r = renderGlue2Ldif(buildInfoDocument(rich));
  const service = entry(r.text, SERVICE_DN);
  assert.match(service, /^GLUE2ServiceAdminDomainForeignKey: urn:ad:testsite$/m);
  const ep = entry(r.text, `GLUE2EndpointID=urn:ogf:ComputingEndpoint:${HOST}:rest:${URL}:1.0,${SERVICE_DN}`);
  assert.match(ep, new RegExp(`^GLUE2EndpointServiceForeignKey: urn:ogf:ComputingService:${HOST}:arex$`, 'm'));
  assert.match(ep, /^GLUE2ComputingEndpointComputingServiceForeignKey: /m);
  const main = entry(r.text, `GLUE2ShareID=urn:ogf:ComputingShare:${HOST}:main,${SERVICE_DN}`);
  assert.match(main, /^GLUE2ShareServiceForeignKey: /m);
  assert.equal([...main.matchAll(/^GLUE2ComputingShareComputingEndpointForeignKey: /gm)].length, 2);
  assert.match(main, /^GLUE2ComputingShareExecutionEnvironmentForeignKey: urn:ogf:ExecutionEnvironment:/m);
  assert.match(r.text, /^GLUE2ResourceManagerForeignKey: urn:ogf:ComputingManager:/m);
  assert.match(r.text, /^GLUE2ApplicationEnvironmentComputingManagerForeignKey: urn:ogf:ComputingManager:/m);
  assert.match(r.text, /^dn: GLUE2GroupID=ExecutionEnvironments,GLUE2ManagerID=/m);
});

test('a required attribute the document does not know gets the GLUE2 placeholder', () => {
  const r = renderGlue2Ldif(buildInfoDocument(snapshot({ host: {} })));
  assert.deepEqual(r.problems, []);
  const ee = r.entries.find((e) => e.attrs.get('objectClass')?.includes('GLUE2ExecutionEnvironment'));
  assert.deepEqual(ee?.attrs.get('GLUE2ExecutionEnvironmentMainMemorySize'), ['999999999']);
  assert.deepEqual(ee?.attrs.get('GLUE2ExecutionEnvironmentPlatform'), ['UNDEFINEDVALUE']);
  assert.deepEqual(ee?.attrs.get('GLUE2ExecutionEnvironmentConnectivityIn'), ['undefined']);
});

const tinyService = (children: readonly XmlElement[]): XmlElement =>
  el('InfoRoot', [
    el('Domains', [
      el('AdminDomain', [
        el('ID', 'urn:ad:x'),
        el('Services', [el('ComputingService', [el('ID', 'urn:svc'), el('Type', 'org.nordugrid.arex'), children])]),
      ]),
    ]),
  ]);

test('refused with a reason: an unknown attribute, a non-integer, a second single value, NUL, no ID, a taken DN', () => {
  const r = renderGlue2Ldif(
    tinyService([
      el('NoSuchProperty', 'x'),
      el('TotalJobs', 'many'),
      el('QualityLevel', 'production'),
      el('QualityLevel', 'testing'),
      el('ComputingShare', [el('ID', 's1'), el('Name', 'nul\0here'), el('ServingState', 'production')]),
      el('ComputingShare', [el('Name', 'no id')]),
      el('ComputingShare', [el('ID', 's1')]),
      el('ComputingShare', [el('ID', 'S1')]),
    ]),
  );
  const expect = [
    /ComputingService urn:svc: NoSuchProperty left out: the GLUE2 LDAP schema has no attribute for it/,
    /ComputingService urn:svc: TotalJobs left out: GLUE2ComputingServiceTotalJobs takes an integer, not "many"/,
    /ComputingService urn:svc: QualityLevel "testing" left out: GLUE2ServiceQualityLevel holds one value/,
    /ComputingShare s1: Name left out: a NUL character/,
    /ComputingShare: left out: it has no ID/,
    /ComputingShare s1: left out: its DN .* is taken by an earlier entry/,
    /ComputingShare S1: left out: its DN .* is taken by an earlier entry/, // DNs compare without case
  ];
  assert.equal(r.problems.length, expect.length, r.problems.join('\n'));
  expect.forEach((re, i) => assert.match(r.problems[i]!, re));
  assert.doesNotMatch(r.text, /NoSuchProperty|many|testing|nul/);
  assert.equal(r.entries.filter((e) => e.dn.startsWith('GLUE2ShareID=')).length, 1);
});

test('no version line, no comment, no folded line: the text concatenates with other providers', () => {
  const text = renderGlue2Ldif(buildInfoDocument(rich)).text;
  assert.doesNotMatch(text, /^version:/m);
  assert.doesNotMatch(text, /^#/m);
  assert.doesNotMatch(text, /\n /);
  assert.ok(text.endsWith('\n') && !text.endsWith('\n\n\n'));
});

// The table is derived from the schema file; where glue-schema is installed, check it still is.
const SCHEMA = '/etc/ldap/schema/GLUE20.schema';
test(
  'the schema table matches the installed GLUE20.schema',
  { skip: existsSync(SCHEMA) ? false : `no ${SCHEMA}` },
  () => {
    const text = readFileSync(SCHEMA, 'utf8').replace(/#[^\n]*/g, '');
    const blocks = text.split(/\n(?=(?:attributetype|objectclass)\b)/i);
    const list = (b: string, key: string): string[] => {
      const m = new RegExp(`${key}\\s+(\\([^)]*\\)|\\S+)`).exec(b);
      return m
        ? m[1]!
            .replace(/[()$]/g, ' ')
            .trim()
            .split(/\s+/)
            .map((a) => a.slice('GLUE2'.length))
        : [];
    };
    const named = (b: string): string | undefined => /NAME\s+'([^']+)'/.exec(b)?.[1];
    for (const [cls, k] of Object.entries(GLUE2_LDAP_CLASSES)) {
      const b = blocks.find((x) => /^\s*objectclass/i.test(x) && named(x) === `GLUE2${cls}`);
      assert.ok(b !== undefined, cls);
      assert.deepEqual([list(b, 'MUST'), list(b, 'MAY')], [k.must, k.may], cls);
    }
    for (const b of blocks.filter((x) => /^\s*attributetype/i.test(x))) {
      const n = named(b)?.slice('GLUE2'.length);
      if (n === undefined) continue;
      if (GLUE2_LDAP_INTEGERS.has(n)) assert.match(b, /SYNTAX\s+1\.3\.6\.1\.4\.1\.1466\.115\.121\.1\.27/, n);
      if (GLUE2_LDAP_MULTI_VALUED.has(n)) assert.doesNotMatch(b, /SINGLE-VALUE/, n);
    }
  },
);
