/**
 * The LDIF, validated for real: loaded into a private slapd with Debian's GLUE 2.0
 * schema (glue-schema) on loopback, then read back with ldapsearch the way clients
 * search (archery-manage: `(objectClass=GLUE2ComputingEndpoint)` under o=glue; a site
 * BDII: the subtree of GLUE2GroupID=resource,o=glue). The controls at the end show that
 * this slapd does refuse what the renderer keeps out, so the loading test can fail.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { buildInfoDocument } from '../../src/info/info-document.js';
import { renderGlue2Ldif, RESOURCE_BASE_DN } from '../../src/info/glue2-ldif.js';
import { removeDir, tempDir } from '../helpers/service.js';
import { entriesOf, ldapSkip, Slapd, valuesOf } from '../helpers/slapd.js';
import { snapshot } from './fixtures.js';
import { routeShares } from '../../src/info/route-shares.js';
import { buildConfig } from '../../src/config/load.js';

const skip = ldapSkip();

// Awkward but legal input: a VO name with DN-special characters, a host ending in "dn"
// (bdii-update splits entries at any "dn:"), multi-line and non-ASCII descriptions.
const HOST = 'ce.cdn';
const URL = 'https://ce.cdn:8443/arex';
const WEIRD_VO = 'we,ird+vo;"x"';
// Routes as shares: one naming the odd VO with a role (both policies), one naming none.
const routed = buildConfig({
  routes: [
    { name: 'odd', match: { fqans: [`/${WEIRD_VO}/Role=prod`], queues: ['main'] }, partition: 'short', maxRunning: 3 },
    { name: 'rest', match: {} },
  ],
});
const s = snapshot({
  routeShares: routeShares(routed.routes, undefined, ['main', 'long'], () => undefined),
  hostname: HOST,
  endpointUrl: URL,
  clusterName: 'Site <Test>',
  accessRules: ['vo:atlas', `vo:${WEIRD_VO}`],
  ldap: { url: `ldap://${HOST}:2135/o=glue`, port: 2135 },
  runtimeEnvironments: [{ name: 'ENV/PROXY' }, { name: 'APPS/HEP/ATLAS-1.0', description: 'Athena\nrelease 1.0' }],
  queues: [
    { name: 'main', vos: ['atlas', WEIRD_VO], description: 'first line\nsecond line' },
    { name: 'long', description: 'Grüße, lange Jobs' },
  ],
});
const rendering = renderGlue2Ldif(buildInfoDocument(s));

describe('GLUE2 LDIF in a real slapd with the GLUE 2.0 schema', { skip }, () => {
  let dir: string;
  let slapd: Slapd;

  before(async () => {
    dir = tempDir('slapd');
    slapd = await Slapd.start(dir);
  });
  after(async () => {
    await slapd?.stop();
    if (dir) removeDir(dir);
  });

  it('loads whole: every entry accepted by the schema', async () => {
    assert.deepEqual(rendering.problems, []);
    const r = await slapd.add(rendering.text);
    assert.equal(r.code, 0, `ldapadd refused the LDIF: ${r.stderr}`);
    const back = entriesOf(await slapd.search('o=glue', '(objectClass=*)', ['1.1']));
    assert.equal(back.length, rendering.entries.length);
  });

  it('the REST endpoints, found as archery-manage searches (o=glue, GLUE2ComputingEndpoint)', async () => {
    const out = await slapd.search('o=glue', '(objectClass=GLUE2ComputingEndpoint)', [
      'GLUE2EndpointID',
      'GLUE2EndpointURL',
      'GLUE2EndpointHealthState',
      'GLUE2EndpointInterfaceName',
      'GLUE2EndpointInterfaceVersion',
    ]);
    const eps = entriesOf(out);
    assert.equal(eps.length, 3);
    const rest = eps.filter((e) => valuesOf(e, 'GLUE2EndpointInterfaceName')[0] === 'org.nordugrid.arcrest');
    assert.deepEqual(
      rest.map((e) => [valuesOf(e, 'GLUE2EndpointURL'), valuesOf(e, 'GLUE2EndpointInterfaceVersion')]),
      [
        [[URL], ['1.0']],
        [[URL], ['1.1']],
      ],
    );
    for (const e of rest) assert.deepEqual(valuesOf(e, 'GLUE2EndpointHealthState'), ['ok']);
  });

  it('shares per queue and per VO, with their MappingPolicy; the special VO name reads back as it was', async () => {
    const shares = entriesOf(
      await slapd.search(RESOURCE_BASE_DN, '(objectClass=GLUE2ComputingShare)', [
        'GLUE2EntityName',
        'GLUE2ComputingShareMappingQueue',
        'GLUE2ShareDescription',
      ]),
    );
    assert.deepEqual(shares.map((e) => valuesOf(e, 'GLUE2EntityName')[0]).sort(), [
      'long',
      'main',
      'main_atlas',
      `main_${WEIRD_VO}`,
      'odd',
      'rest',
      'rest',
    ]);
    const main = shares.find((e) => valuesOf(e, 'GLUE2EntityName')[0] === 'main')!;
    assert.deepEqual(valuesOf(main, 'GLUE2ShareDescription'), ['first line\nsecond line']);
    const long = shares.find((e) => valuesOf(e, 'GLUE2EntityName')[0] === 'long')!;
    assert.deepEqual(valuesOf(long, 'GLUE2ShareDescription'), ['Grüße, lange Jobs']);
    const policies = entriesOf(
      await slapd.search(RESOURCE_BASE_DN, '(objectClass=GLUE2MappingPolicy)', [
        'GLUE2PolicyRule',
        'GLUE2MappingPolicyShareForeignKey',
      ]),
    );
    assert.deepEqual(policies.map((p) => valuesOf(p, 'GLUE2PolicyRule')[0]).sort(), [
      `VOMS:/${WEIRD_VO}/Role=prod`,
      'vo:atlas',
      `vo:${WEIRD_VO}`,
      `vo:${WEIRD_VO}`,
    ]);
    // A search on the escaped value finds the entry: the DN and the value agree.
    const byRule = entriesOf(await slapd.search('o=glue', `(GLUE2PolicyRule=vo:${WEIRD_VO.replace(/"/g, '\\22')})`));
    assert.equal(byRule.length, 5); // three AccessPolicies, the VO's MappingPolicy and the route's
  });

  it("route shares: MappingQueue the Ceres queue, the route's limit, its policies under the share's entry", async () => {
    const shares = entriesOf(
      await slapd.search(RESOURCE_BASE_DN, '(&(objectClass=GLUE2ComputingShare)(GLUE2ShareID=*:route:*))', [
        'GLUE2EntityName',
        'GLUE2ComputingShareMappingQueue',
        'GLUE2ComputingShareMaxRunningJobs',
      ]),
    );
    assert.deepEqual(
      shares
        .map((e) => [
          valuesOf(e, 'GLUE2EntityName')[0],
          valuesOf(e, 'GLUE2ComputingShareMappingQueue')[0],
          valuesOf(e, 'GLUE2ComputingShareMaxRunningJobs')[0],
        ])
        .sort(),
      [
        ['odd', 'main', '3'],
        ['rest', 'long', undefined],
        ['rest', 'main', undefined],
      ],
    );
    const odd = shares.find((e) => valuesOf(e, 'GLUE2EntityName')[0] === 'odd')!;
    // The odd VO is in no DN: the share's and its policies' DNs are made of route and queue names.
    const under = entriesOf(
      await slapd.search(valuesOf(odd, 'dn')[0]!, '(objectClass=GLUE2MappingPolicy)', [
        'GLUE2PolicyScheme',
        'GLUE2PolicyRule',
      ]),
    );
    assert.deepEqual(under.map((p) => [valuesOf(p, 'GLUE2PolicyScheme')[0], valuesOf(p, 'GLUE2PolicyRule')]).sort(), [
      ['basic', [`vo:${WEIRD_VO}`]],
      ['org.glite.standard', [`VOMS:/${WEIRD_VO}/Role=prod`]],
    ]);
    for (const p of under) assert.doesNotMatch(valuesOf(p, 'dn')[0]!, /ird/);
  });

  it('an AccessPolicy under every endpoint; application and execution environments; the admin domain', async () => {
    const access = entriesOf(
      await slapd.search('o=glue', '(objectClass=GLUE2AccessPolicy)', [
        'GLUE2PolicyRule',
        'GLUE2AccessPolicyEndpointForeignKey',
      ]),
    );
    assert.equal(access.length, 3);
    for (const a of access) assert.deepEqual(valuesOf(a, 'GLUE2PolicyRule'), ['vo:atlas', `vo:${WEIRD_VO}`]);
    const apps = entriesOf(
      await slapd.search('o=glue', '(objectClass=GLUE2ApplicationEnvironment)', ['GLUE2ApplicationEnvironmentAppName']),
    );
    assert.deepEqual(
      apps.map((a) => valuesOf(a, 'GLUE2ApplicationEnvironmentAppName')[0]),
      ['ENV/PROXY', 'APPS/HEP/ATLAS'],
    );
    assert.equal(entriesOf(await slapd.search('o=glue', '(objectClass=GLUE2ExecutionEnvironment)')).length, 1);
    const domain = entriesOf(await slapd.search('o=glue', '(objectClass=GLUE2AdminDomain)', ['GLUE2EntityName']));
    assert.deepEqual(valuesOf(domain[0]!, 'GLUE2EntityName'), ['Site <Test>']);
  });

  // Controls: what the renderer refuses or escapes is refused by slapd when sent as is.
  it('control: slapd refuses an attribute the schema does not know', async () => {
    const r = await slapd.add(
      'dn: GLUE2GroupID=control1,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: control1\nGLUE2NoSuchProperty: x\n',
    );
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /undefined attribute type|attribute type undefined/i);
  });

  it('control: slapd refuses a second value of a single-valued attribute and a non-integer in an INTEGER one', async () => {
    const base = 'objectClass: GLUE2Group\nobjectClass: GLUE2Entity\n';
    const two = await slapd.add(
      `dn: GLUE2GroupID=control2,o=glue\n${base}GLUE2GroupID: control2\nGLUE2EntityName: a\nGLUE2EntityName: b\n`,
    );
    assert.notEqual(two.code, 0);
    assert.match(two.stderr, /single-valued|multiple values/i);
    const share = `dn: GLUE2ShareID=x,${RESOURCE_BASE_DN}\nobjectClass: GLUE2Share\nobjectClass: GLUE2ComputingShare\nGLUE2ShareID: x\nGLUE2ShareServiceForeignKey: s\nGLUE2ComputingShareServingState: production\nGLUE2ComputingShareTotalJobs: many\n`;
    const notInt = await slapd.add(share);
    assert.notEqual(notInt.code, 0);
    assert.match(notInt.stderr, /invalid per syntax|syntax/i);
  });

  it('control: an unescaped comma in a DN value or a raw second line breaks the entry', async () => {
    const comma = await slapd.add(`dn: GLUE2GroupID=a,b,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: a,b\n`);
    assert.notEqual(comma.code, 0);
    const lines = await slapd.add(
      `dn: GLUE2GroupID=control3,o=glue\nobjectClass: GLUE2Group\nGLUE2GroupID: control3\nGLUE2EntityName: first\nsecond\n`,
    );
    assert.notEqual(lines.code, 0);
  });
});
