import { test } from 'node:test';
import assert from 'node:assert/strict';
import { localName, type XmlElement } from '../../src/doc/element.js';
import { parseXml } from '../../src/doc/parse-xml.js';
import { renderHtml } from '../../src/doc/render-html.js';
import { renderXml } from '../../src/doc/render-xml.js';
import { GLUE2_NS, REST_CAPABILITIES, REST_EXTENSIONS, XSI_NS } from '../../src/info/glue2-constants.js';
import { buildInfoDocument } from '../../src/info/info-document.js';
import { HOST, NOW_TEXT, snapshot, URL } from './fixtures.js';
import { childNames, orderViolations } from './glue2-order.js';
import { all, at, text, texts } from './tree.js';

const CS = 'Domains/AdminDomain/Services/ComputingService';
/** The REST 1.0 endpoint (each REST version is an endpoint of its own). */
const EP = `${CS}/ComputingEndpoint[InterfaceVersion=1.0]`;
const CM = `${CS}/ComputingManager`;
const EE = `${CM}/ExecutionEnvironments/ExecutionEnvironment`;

const twoQueues = snapshot(
  {
    queues: [
      {
        name: 'main',
        maxWallTimeSeconds: 3600,
        minWallTimeSeconds: 60,
        defaultWallTimeSeconds: 600,
        maxCpuTimeSeconds: 7200,
        maxMemoryBytes: 2 * 1024 ** 3,
        maxSlotsPerJob: 2,
        description: 'Hauptschlange',
      },
      { name: 'long', servingState: 'draining', maxRunningJobs: 5 },
    ],
    runtimeEnvironments: [{ name: 'APPS/FOO-1.0', description: 'Foo 1.0' }, { name: 'ENV/PROXY' }],
  },
  [
    { gmState: 'INLRMS', lrmsState: 'R', queue: 'main' },
    { gmState: 'INLRMS', lrmsState: 'Q', queue: 'long', slots: 2 },
    { gmState: 'PREPARING', queue: 'main' },
    { gmState: 'ACCEPTED', queue: 'long' },
    { gmState: 'FINISHED', queue: 'main' },
  ],
);

test('skeleton: InfoRoot / Domains (GLUE2 namespace, xsi) / AdminDomain / Services / ComputingService', () => {
  const doc = buildInfoDocument(snapshot());
  assert.equal(doc.name, 'InfoRoot');
  assert.equal(doc.attrs, undefined);
  const domains = at(doc, 'Domains');
  assert.equal(domains.attrs?.xmlns, GLUE2_NS);
  assert.equal(domains.attrs?.['xmlns:xsi'], XSI_NS);
  assert.match(domains.attrs?.['xsi:schemaLocation'] ?? '', /GLUE2\.xsd$/);
  at(doc, CS);
  // After a real parse, everything under Domains is in the GLUE2 namespace.
  const back = parseXml(renderXml(doc));
  assert.equal(back.ns, '');
  assert.equal(at(back, CS).ns, GLUE2_NS);
  assert.equal(at(back, `${EP}/URL`).ns, GLUE2_NS);
});

test('element order is a subsequence of A-REX order, for every snapshot shape', () => {
  const shapes = [
    snapshot(),
    twoQueues,
    snapshot({ queues: [] }),
    snapshot({
      host: {},
      workingArea: undefined,
      issuerCa: undefined,
      trustedCas: [],
      startTime: undefined,
      totalSlots: undefined,
      totalLogicalCpus: undefined,
    }),
    // Policies and the LDAP endpoint (resource BDII enabled, VOs in the authorization).
    snapshot({
      accessRules: ['vo:atlas'],
      ldap: { url: 'ldap://ce.example.org:2135/o=glue', port: 2135 },
      queues: [{ name: 'main', vos: ['atlas'], description: 'd' }],
    }),
  ];
  for (const s of shapes) assert.deepEqual(orderViolations(buildInfoDocument(s)), []);
});

test('entities carry BaseType, CreationTime and Validity, in that order', () => {
  const doc = buildInfoDocument(twoQueues);
  const expect: Array<[string, string]> = [
    ['Domains/AdminDomain', 'Domain'],
    [CS, 'Service'],
    [EP, 'Endpoint'],
    [CM, 'Manager'],
    [EE, 'Resource'],
  ];
  for (const [path, base] of expect) {
    assert.deepEqual(
      Object.entries(at(doc, path).attrs ?? {}),
      [
        ['BaseType', base],
        ['CreationTime', NOW_TEXT],
        ['Validity', '10800'],
      ],
      path,
    );
  }
  for (const share of all(doc, `${CS}/ComputingShare`)) assert.equal(share.attrs?.BaseType, 'Share');
  // ApplicationEnvironment is a plain GLUE2 Entity: no BaseType.
  for (const ae of all(doc, `${CM}/ApplicationEnvironments/ApplicationEnvironment`)) {
    assert.deepEqual(Object.entries(ae.attrs ?? {}), [
      ['CreationTime', NOW_TEXT],
      ['Validity', '10800'],
    ]);
  }
});

test('ComputingEndpoint: what the ARC client needs to pick the REST plugins and broker', () => {
  const doc = buildInfoDocument(snapshot());
  const ep = at(doc, EP);
  assert.deepEqual(childNames(ep), [
    'ID',
    'Name',
    'URL',
    'Capability',
    'Capability',
    'Capability',
    'Capability',
    'Capability',
    'Capability',
    'Capability',
    'Technology',
    'InterfaceName',
    'InterfaceVersion',
    ...REST_EXTENSIONS.map(() => 'InterfaceExtension'),
    'Implementor',
    'ImplementationName',
    'ImplementationVersion',
    'QualityLevel',
    'HealthState',
    'ServingState',
    'StartTime',
    'IssuerCA',
    'TrustedCA',
    'TrustedCA',
    'Staging',
    'JobDescription',
    'JobDescription',
    'TotalJobs',
    'RunningJobs',
    'WaitingJobs',
    'StagingJobs',
    'SuspendedJobs',
    'PreLRMSWaitingJobs',
    'Associations',
  ]);
  assert.equal(text(ep, 'URL'), URL);
  assert.equal(text(ep, 'ID'), `urn:ogf:ComputingEndpoint:${HOST}:rest:${URL}:1.0`);
  assert.equal(text(ep, 'InterfaceName'), 'org.nordugrid.arcrest');
  assert.deepEqual(texts(ep, 'InterfaceVersion'), ['1.0']);
  // REST 1.1 is an endpoint of its own, the same but for its version and ID (the LDAP
  // schema holds one InterfaceVersion per endpoint).
  const eps = all(doc, `${CS}/ComputingEndpoint`);
  assert.deepEqual(
    eps.map((e) => [text(e, 'InterfaceVersion'), text(e, 'URL'), text(e, 'ID')]),
    ['1.0', '1.1'].map((v) => [v, URL, `urn:ogf:ComputingEndpoint:${HOST}:rest:${URL}:${v}`]),
  );
  assert.equal(text(ep, 'Technology'), 'rest');
  assert.deepEqual(texts(ep, 'Capability'), REST_CAPABILITIES);
  // Ceres's extensions, announced where GLUE2 has a place for them (docs/compatibility.md).
  assert.deepEqual(texts(ep, 'InterfaceExtension'), REST_EXTENSIONS);
  for (const x of ['job-list-filters', 'job-monitoring', 'session-patch'])
    assert.ok(texts(ep, 'InterfaceExtension').includes(`urn:ceres:rest:${x}:1`), x);
  assert.ok(texts(ep, 'Capability').includes('executionmanagement.jobcreation'));
  assert.equal(text(ep, 'HealthState'), 'ok');
  assert.equal(text(ep, 'ServingState'), 'production');
  assert.equal(text(ep, 'Staging'), 'staginginout');
  assert.deepEqual(texts(ep, 'JobDescription'), ['nordugrid:xrsl', 'emies:adl']);
  assert.equal(text(ep, 'IssuerCA'), '/DC=org/DC=example/CN=Example CA');
  assert.deepEqual(texts(ep, 'TrustedCA'), ['/DC=org/DC=example/CN=Example CA', '/DC=org/DC=other/CN=Other CA']);
  assert.equal(text(ep, 'StartTime'), '2026-11-21T20:00:00Z');
  assert.equal(text(ep, 'ImplementationVersion'), '0.1.0');
});

test('health and serving state are published as given, with HealthStateInfo only when there is one', () => {
  const warn = buildInfoDocument(
    snapshot({ health: { state: 'warning', info: 'Host credentials will expire soon' }, servingState: 'draining' }),
  );
  assert.equal(text(warn, `${EP}/HealthState`), 'warning');
  assert.equal(text(warn, `${EP}/HealthStateInfo`), 'Host credentials will expire soon');
  assert.equal(text(warn, `${EP}/ServingState`), 'draining');
  assert.equal(text(warn, `${CS}/ComputingShare/ServingState`), 'draining');
  const critical = buildInfoDocument(snapshot({ health: { state: 'critical', info: '  ' } }));
  assert.equal(text(critical, `${EP}/HealthState`), 'critical');
  assert.equal(all(critical, `${EP}/HealthStateInfo`).length, 0);
});

test('one ComputingShare per queue, named and mapped to the queue, limits in GLUE2 units', () => {
  const doc = buildInfoDocument(twoQueues);
  const shares = all(doc, `${CS}/ComputingShare`);
  assert.deepEqual(
    shares.map((s) => text(s, 'Name')),
    ['main', 'long'],
  );
  assert.deepEqual(
    shares.map((s) => text(s, 'MappingQueue')),
    ['main', 'long'],
  );
  const [main, long] = shares as [XmlElement, XmlElement];
  assert.equal(text(main, 'ID'), `urn:ogf:ComputingShare:${HOST}:main`);
  assert.equal(text(main, 'Description'), 'Hauptschlange');
  assert.equal(text(main, 'MaxWallTime'), '3600');
  assert.equal(text(main, 'MinWallTime'), '60');
  assert.equal(text(main, 'DefaultWallTime'), '600');
  assert.equal(text(main, 'MaxCPUTime'), '7200');
  assert.equal(text(main, 'MaxMainMemory'), '2048'); // MB
  assert.equal(text(main, 'MaxSlotsPerJob'), '2');
  assert.equal(text(main, 'ServingState'), 'production');
  assert.equal(text(long, 'ServingState'), 'draining');
  assert.equal(text(long, 'MaxRunningJobs'), '5');
  for (const absent of ['MaxWallTime', 'MaxMainMemory', 'Description', 'MappingPolicy'])
    assert.equal(all(long, absent).length, 0, absent);
  assert.deepEqual(texts(doc, `${EP}/Associations/ComputingShareID`), [
    `urn:ogf:ComputingShare:${HOST}:main`,
    `urn:ogf:ComputingShare:${HOST}:long`,
  ]);
  assert.deepEqual(texts(doc, `${EE}/Associations/ComputingShareID`), [
    `urn:ogf:ComputingShare:${HOST}:main`,
    `urn:ogf:ComputingShare:${HOST}:long`,
  ]);
  assert.equal(text(doc, `${CS}/Complexity`), 'endpoint=2,share=2,resource=1');
  assert.deepEqual(texts(main, 'Associations/ComputingEndpointID'), texts(doc, `${CS}/ComputingEndpoint/ID`));
  assert.equal(text(main, 'Associations/ExecutionEnvironmentID'), text(doc, `${EE}/ID`));
});

test('live job counters: service, endpoint and per-share figures, free slots from the machine', () => {
  const doc = buildInfoDocument(twoQueues);
  const expectAll = {
    TotalJobs: '4',
    RunningJobs: '1',
    WaitingJobs: '1',
    StagingJobs: '1',
    SuspendedJobs: '0',
    PreLRMSWaitingJobs: '1',
  };
  for (const path of [CS, EP])
    for (const [k, v] of Object.entries(expectAll)) assert.equal(text(doc, `${path}/${k}`), v, `${path}/${k}`);
  const [main, long] = all(doc, `${CS}/ComputingShare`) as [XmlElement, XmlElement];
  assert.deepEqual(
    [
      text(main, 'TotalJobs'),
      text(main, 'RunningJobs'),
      text(main, 'StagingJobs'),
      text(main, 'UsedSlots'),
      text(main, 'RequestedSlots'),
    ],
    ['2', '1', '1', '1', '1'],
  );
  assert.deepEqual(
    [
      text(long, 'TotalJobs'),
      text(long, 'WaitingJobs'),
      text(long, 'PreLRMSWaitingJobs'),
      text(long, 'UsedSlots'),
      text(long, 'RequestedSlots'),
    ],
    ['2', '1', '1', '0', '3'],
  );
  // 2 slots, 1 used by the running job: each share offers the one free slot of the machine.
  assert.equal(text(main, 'FreeSlots'), '1');
  assert.equal(text(long, 'FreeSlotsWithDuration'), '1');
  assert.equal(text(doc, `${CM}/SlotsUsedByGridJobs`), '1');
  assert.equal(text(doc, `${CM}/TotalSlots`), '2');
});

test('a queue without jobs publishes zero counters; free slots never go negative', () => {
  const busy = snapshot({ totalSlots: 1 }, [{ gmState: 'INLRMS', lrmsState: 'R', queue: 'other', slots: 4 }]);
  const doc = buildInfoDocument(busy);
  const share = at(doc, `${CS}/ComputingShare`);
  assert.equal(text(share, 'TotalJobs'), '0');
  assert.equal(text(share, 'UsedSlots'), '0');
  assert.equal(text(share, 'FreeSlots'), '0');
});

test('free slots are absent when the total is unknown', () => {
  const doc = buildInfoDocument(snapshot({ totalSlots: undefined }));
  assert.equal(all(doc, `${CS}/ComputingShare/FreeSlots`).length, 0);
  assert.equal(all(doc, `${CS}/ComputingShare/FreeSlotsWithDuration`).length, 0);
  assert.equal(all(doc, `${CM}/TotalSlots`).length, 0);
});

test('ComputingManager and ExecutionEnvironment: batch system and machine facts in GLUE2 units', () => {
  const doc = buildInfoDocument(
    snapshot({
      lrms: { name: 'fork', version: '1.0' },
      host: { ...snapshot().host, cpuClockMhz: 2596.6, connectivityOut: true, connectivityIn: false },
    }),
  );
  assert.equal(text(doc, `${CM}/ID`), `urn:ogf:ComputingManager:${HOST}:fork`);
  assert.equal(text(doc, `${CM}/ProductName`), 'fork');
  assert.equal(text(doc, `${CM}/ProductVersion`), '1.0');
  assert.equal(text(doc, `${CM}/BulkSubmission`), 'false');
  assert.equal(text(doc, `${CM}/TotalLogicalCPUs`), '2');
  assert.equal(text(doc, `${CM}/WorkingAreaTotal`), '252'); // GB
  assert.equal(text(doc, `${CM}/WorkingAreaFree`), '80');
  assert.equal(text(doc, `${CM}/WorkingAreaShared`), 'true');
  assert.equal(text(doc, `${CM}/WorkingAreaLifeTime`), '604800');
  assert.equal(all(doc, `${CM}/ExecutionEnvironments/ExecutionEnvironment`).length, 1);
  assert.equal(text(doc, `${EE}/ID`), `urn:ogf:ExecutionEnvironment:${HOST}:execenv0`);
  assert.equal(text(doc, `${EE}/Platform`), 'amd64');
  assert.equal(text(doc, `${EE}/MainMemorySize`), '8192'); // MB: the broker compares memory requests with it
  assert.equal(text(doc, `${EE}/CPUClockSpeed`), '2596');
  assert.equal(text(doc, `${EE}/OSFamily`), 'linux');
  assert.equal(text(doc, `${EE}/OSName`), 'debian');
  assert.equal(text(doc, `${EE}/OSVersion`), '12');
  assert.equal(text(doc, `${EE}/ConnectivityIn`), 'false');
  assert.equal(text(doc, `${EE}/ConnectivityOut`), 'true');
});

test('unknown host, disk and CA facts leave their elements out', () => {
  const doc = buildInfoDocument(
    snapshot({
      host: { cpuClockMhz: 0 },
      workingArea: undefined,
      issuerCa: undefined,
      trustedCas: ['', '  '],
      startTime: undefined,
      totalLogicalCpus: undefined,
      lrms: { name: 'fork', version: '' },
    }),
  );
  assert.deepEqual(childNames(at(doc, EE)), ['ID', 'Name', 'Associations']);
  for (const absent of [
    'WorkingAreaShared',
    'WorkingAreaTotal',
    'WorkingAreaFree',
    'WorkingAreaLifeTime',
    'TotalLogicalCPUs',
    'ProductVersion',
  ]) {
    assert.equal(all(doc, `${CM}/${absent}`).length, 0, absent);
  }
  for (const absent of ['IssuerCA', 'TrustedCA', 'StartTime', 'HealthStateInfo'])
    assert.equal(all(doc, `${EP}/${absent}`).length, 0, absent);
});

test('runtime environments: one ApplicationEnvironment each, name and version split', () => {
  const doc = buildInfoDocument(twoQueues);
  const aes = all(doc, `${CM}/ApplicationEnvironments/ApplicationEnvironment`);
  assert.equal(aes.length, 2);
  const [foo, proxy] = aes as [XmlElement, XmlElement];
  assert.equal(text(foo, 'ID'), `urn:ogf:ApplicationEnvironment:${HOST}:rte:0`);
  assert.equal(text(foo, 'AppName'), 'APPS/FOO');
  assert.equal(text(foo, 'AppVersion'), '1.0');
  assert.equal(text(foo, 'State'), 'installednotverified');
  assert.equal(text(foo, 'Description'), 'Foo 1.0');
  assert.equal(text(foo, 'Associations/ExecutionEnvironmentID'), text(doc, `${EE}/ID`));
  assert.equal(text(proxy, 'ID'), `urn:ogf:ApplicationEnvironment:${HOST}:rte:1`);
  assert.equal(text(proxy, 'AppName'), 'ENV/PROXY');
  assert.equal(all(proxy, 'AppVersion').length, 0);
  assert.equal(all(proxy, 'Description').length, 0);
});

test('no runtime environments: no empty ApplicationEnvironments container', () => {
  const doc = buildInfoDocument(snapshot({ runtimeEnvironments: [] }));
  assert.equal(all(doc, `${CM}/ApplicationEnvironments`).length, 0);
  assert.deepEqual(childNames(at(doc, CM)).slice(-1), ['ExecutionEnvironments']);
});

test('empty queue list: no shares and no empty Associations, still a valid document', () => {
  const doc = buildInfoDocument(snapshot({ queues: [] }));
  assert.equal(all(doc, `${CS}/ComputingShare`).length, 0);
  assert.equal(all(doc, `${EP}/Associations`).length, 0);
  assert.equal(all(doc, `${EE}/Associations`).length, 0);
  assert.equal(text(doc, `${CS}/Complexity`), 'endpoint=2,share=0,resource=1');
  // Every container left has content (an empty one would render as "" in JSON).
  const walk = (e: XmlElement): void => {
    for (const c of e.children) if (typeof c !== 'string') walk(c);
    assert.ok(e.children.length > 0, `empty element ${localName(e)}`);
  };
  walk(doc);
  parseXml(renderXml(doc));
});

test('ids and names use the configured host and cluster', () => {
  const doc = buildInfoDocument(snapshot({ hostname: 'h.example', clusterName: 'Site Ω' }));
  assert.equal(text(doc, 'Domains/AdminDomain/ID'), 'urn:ad:Site Ω');
  assert.equal(text(doc, 'Domains/AdminDomain/Name'), 'Site Ω');
  assert.equal(text(doc, `${CS}/ID`), 'urn:ogf:ComputingService:h.example:arex');
  assert.equal(text(doc, `${CS}/Name`), 'Site Ω');
  assert.equal(text(doc, `${CS}/Type`), 'org.nordugrid.arex');
});

test('UTF-8 text survives XML rendering and parsing', () => {
  const desc = 'Warteschlange für lange Jobs – 東京 ✓';
  const doc = buildInfoDocument(
    snapshot({
      queues: [{ name: 'long', description: desc }],
      runtimeEnvironments: [{ name: 'APPS/X-2', description: 'Café' }],
    }),
  );
  const back = parseXml(Buffer.from(renderXml(doc), 'utf8'));
  assert.equal(text(back, `${CS}/ComputingShare/Description`), desc);
  assert.equal(text(back, `${CM}/ApplicationEnvironments/ApplicationEnvironment/Description`), 'Café');
  assert.ok(renderHtml(doc).includes(desc));
});

test('validity defaults to 10800 s when the snapshot gives an unusable value; creation time from now', () => {
  const doc = buildInfoDocument(snapshot({ validitySeconds: Number.NaN, now: 1_800_000_000 }));
  const attrs = at(doc, CS).attrs;
  assert.equal(attrs?.Validity, '10800');
  assert.equal(attrs?.CreationTime, '2027-01-15T08:00:00Z');
  assert.equal(buildInfoDocument(snapshot({ validitySeconds: 120 })).children.length, 1);
  assert.equal(at(buildInfoDocument(snapshot({ validitySeconds: 120 })), EP).attrs?.Validity, '120');
});

test('the builder is pure: the same snapshot gives the same document', () => {
  const s = snapshot();
  assert.equal(renderXml(buildInfoDocument(s)), renderXml(buildInfoDocument(s)));
});

test('custom job description languages replace the default list', () => {
  const doc = buildInfoDocument(snapshot({ jobDescriptionLanguages: ['emies:adl'] }));
  assert.deepEqual(texts(doc, `${EP}/JobDescription`), ['emies:adl']);
});
