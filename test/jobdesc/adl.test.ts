/** ADL (EMI-ES + NorduGrid extensions) mapped into the job model, single and bulk. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAdlBody } from '../../src/jobdesc/adl/parse-adl-body.js';
import { emptyJobDescription } from '../../src/vocabulary/job-description.js';
import { splitSubmission } from '../../src/jobdesc/split-submission.js';
import { ADL_NS, NG_NS, arcClientAdl, bulkAdl, richAdl } from './fixtures/samples.js';
import { adlDoc, adlError, adlOk } from './helpers.js';

const MiB = 1024 * 1024;
const keep = { useIfSuccess: true, useIfFailure: false, useIfCancel: false };

describe('ADL as clients send it', () => {
  it('maps the ARC client ADL (prefixed namespaces) completely', () => {
    assert.deepEqual(adlOk(arcClientAdl), {
      ...emptyJobDescription('adl'),
      jobName: 'tap-A',
      executable: '/bin/echo',
      arguments: ['hello'],
      stdout: 'out.txt',
      queue: 'fork',
      outputFiles: [{ name: 'out.txt', options: keep }],
      delegationId: '18c925bb3dc2',
    });
  });

  it('maps a richer default-namespace ADL completely', () => {
    assert.deepEqual(adlOk(richAdl), {
      ...emptyJobDescription('adl'),
      jobName: 'atlas-pilot',
      executable: 'runpilot.sh',
      arguments: ['-q', 'main'],
      stdout: 'pilot.out',
      stderr: 'pilot.out',
      join: true,
      environment: [
        ['PANDA_SITE', 'CERES'],
        ['EMPTY', ''],
      ],
      rerun: 2,
      priority: 70,
      logDir: 'gmlog',
      runtimeEnvironments: [{ name: 'ENV/PROXY', options: [] }],
      memoryBytes: 2000 * MiB,
      count: 8,
      countPerNode: 8,
      queue: 'main',
      cpuTimeSeconds: 28800,
      wallTimeSeconds: 3600,
      inputFiles: [
        { name: 'runpilot.sh', executable: true },
        { name: 'data.root', executable: false, source: 'https://se.example.org/data.root', delegationId: 'deleg-2' },
      ],
      outputFiles: [
        { name: 'pilot.out', options: keep },
        {
          name: 'result.tgz',
          target: 'davs://se.example.org/out/result.tgz',
          options: { ...keep, useIfFailure: true },
        },
      ],
      delegationId: 'deleg-1',
    });
  });

  it('matches by namespace, not by prefix', () => {
    const prefixed = `<a:ActivityDescription xmlns:a="${ADL_NS}"><a:Application><a:Executable><a:Path>/x</a:Path></a:Executable></a:Application></a:ActivityDescription>`;
    const defaulted = `<ActivityDescription xmlns="${ADL_NS}"><Application><Executable><Path>/x</Path></Executable></Application></ActivityDescription>`;
    assert.deepEqual(adlOk(prefixed), adlOk(defaulted));
  });

  it('ignores elements of other namespaces, even with ADL names', () => {
    const d = adlOk(
      adlDoc(
        `<Resources><o:QueueName xmlns:o="urn:other">x</o:QueueName></Resources><o:Application xmlns:o="urn:other"><o:Executable><o:Path>/y</o:Path></o:Executable></o:Application>`,
      ),
    );
    assert.deepEqual(d, emptyJobDescription('adl'));
  });

  it('accepts an empty ActivityDescription', () => {
    assert.deepEqual(adlOk(`<ActivityDescription xmlns="${ADL_NS}"/>`), emptyJobDescription('adl'));
  });
});

describe('ADL Application', () => {
  it('reads the expected exit code, keeping arguments verbatim', () => {
    const d = adlOk(
      adlDoc(
        '<Application><Executable><Path> /bin/sh </Path><Argument> -c </Argument><FailIfExitCodeNotEqualTo>3</FailIfExitCodeNotEqualTo></Executable></Application>',
      ),
    );
    assert.deepEqual([d.executable, d.arguments, d.expectedExitCode], ['/bin/sh', [' -c '], 3]);
    assert.match(
      adlError(
        adlDoc(
          '<Application><Executable><Path>x</Path><FailIfExitCodeNotEqualTo>zero</FailIfExitCodeNotEqualTo></Executable></Application>',
        ),
      ),
      /FailIfExitCodeNotEqualTo must be an integer/,
    );
  });

  it('keeps Pre/PostExecutable for the acceptance checks; they need a Path', () => {
    const d = adlOk(
      adlDoc(
        '<Application><PreExecutable><Path>/p</Path><Argument>a</Argument></PreExecutable><PostExecutable><Path>/q</Path></PostExecutable></Application>',
      ),
    );
    assert.deepEqual(d.preExecutables, [{ path: '/p', arguments: ['a'] }]);
    assert.deepEqual(d.postExecutables, [{ path: '/q', arguments: [] }]);
    assert.equal(
      adlError(adlDoc('<Application><PreExecutable><Argument>a</Argument></PreExecutable></Application>')),
      'PreExecutable without Path',
    );
  });

  it('reads notifications, mapping EMI-ES states', () => {
    const d = adlOk(
      adlDoc(
        '<Application><Notification><Protocol>email</Protocol><Recipient>a@x.org</Recipient><OnState>PREPROCESSING</OnState><OnState>TERMINAL</OnState></Notification><Notification><Protocol>email</Protocol><Recipient>b@x.org</Recipient></Notification></Application>',
      ),
    );
    assert.deepEqual(d.notify, [
      { states: ['PREPARING', 'FINISHED'], recipients: ['a@x.org'] },
      { states: ['PREPARING', 'FINISHED'], recipients: ['b@x.org'] },
    ]);
    assert.match(
      adlError(
        adlDoc(
          '<Application><Notification><Protocol>sms</Protocol><Recipient>1</Recipient></Notification></Application>',
        ),
      ),
      /Protocol must be 'email'/,
    );
    assert.match(
      adlError(
        adlDoc(
          '<Application><Notification><Protocol>email</Protocol><Recipient>a@x</Recipient><OnState>RUNNING</OnState></Notification></Application>',
        ),
      ),
      /OnState 'RUNNING'/,
    );
    assert.equal(
      adlError(adlDoc('<Application><Notification><Protocol>email</Protocol></Notification></Application>')),
      'Notification without Recipient',
    );
  });

  it('reads WipeTime as a duration; a dateTime means the default lifetime', () => {
    assert.equal(adlOk(adlDoc('<Application><WipeTime>3600</WipeTime></Application>')).lifetimeSeconds, 3600);
    assert.equal(adlOk(adlDoc('<Application><WipeTime>P2D</WipeTime></Application>')).lifetimeSeconds, 172800);
    assert.equal(
      adlOk(adlDoc('<Application><WipeTime>2030-01-01T00:00:00Z</WipeTime></Application>')).lifetimeSeconds,
      undefined,
    );
    assert.match(adlError(adlDoc('<Application><WipeTime>soonish</WipeTime></Application>')), /WipeTime 'soonish'/);
  });

  it('validates ExpirationTime unless it is optional', () => {
    adlOk(adlDoc('<Application><ExpirationTime>2030-01-01T00:00:00Z</ExpirationTime></Application>'));
    adlOk(adlDoc('<Application><ExpirationTime optional="true">whenever</ExpirationTime></Application>'));
    assert.match(
      adlError(adlDoc('<Application><ExpirationTime>whenever</ExpirationTime></Application>')),
      /ExpirationTime 'whenever'/,
    );
    assert.match(
      adlError(adlDoc('<Application><ExpirationTime optional="maybe">x</ExpirationTime></Application>')),
      /attribute optional of ExpirationTime/,
    );
  });

  it('keeps SGAS remote logging destinations and validates all URLs', () => {
    const d = adlOk(
      adlDoc(
        '<Application><RemoteLogging><ServiceType>SGAS</ServiceType><URL>https://sgas/x</URL></RemoteLogging><RemoteLogging><ServiceType>APEL</ServiceType><URL>https://apel/y</URL></RemoteLogging></Application>',
      ),
    );
    assert.deepEqual(d.jobReportUrls, ['https://sgas/x']);
    assert.match(
      adlError(
        adlDoc(
          '<Application><RemoteLogging><ServiceType>SGAS</ServiceType><URL>::</URL></RemoteLogging></Application>',
        ),
      ),
      /RemoteLogging URL/,
    );
    adlOk(
      adlDoc(
        '<Application><RemoteLogging optional="true"><ServiceType>SGAS</ServiceType><URL>bad</URL></RemoteLogging></Application>',
      ),
    );
  });

  it('reads the NorduGrid extensions', () => {
    const d = adlOk(
      adlDoc(
        '<Application><ng:Rerun>4</ng:Rerun><ng:Priority>0</ng:Priority><ng:StartTime>2030-02-03T04:05:06Z</ng:StartTime><ng:DryRun>1</ng:DryRun><ng:CredentialService>myproxy://mp/</ng:CredentialService><x:LoggingDirectory xmlns:x="urn:any">logs</x:LoggingDirectory></Application>',
      ),
    );
    assert.deepEqual(
      [d.rerun, d.priority, d.startTime, d.dryRun, d.credentialServer, d.logDir],
      [4, undefined, '2030-02-03T04:05:06.000Z', true, 'myproxy://mp/', 'logs'],
    );
    assert.equal(adlOk(adlDoc('<Application><ng:Priority>1000</ng:Priority></Application>')).priority, 100);
    assert.match(
      adlError(adlDoc('<Application><ng:Rerun>-1</ng:Rerun></Application>')),
      /Rerun must be a non-negative integer/,
    );
    assert.match(adlError(adlDoc('<Application><ng:StartTime>noon</ng:StartTime></Application>')), /StartTime 'noon'/);
    assert.match(
      adlError(adlDoc('<Application><ng:CredentialService>nope</ng:CredentialService></Application>')),
      /CredentialService 'nope'/,
    );
  });

  it('reads AccessControl given as escaped XML text or as elements', () => {
    const asText = adlOk(
      adlDoc(
        '<Application><ng:AccessControl>&lt;acl&gt;&lt;Type&gt;GACL&lt;/Type&gt;&lt;Content&gt;&lt;gacl/&gt;&lt;/Content&gt;&lt;/acl&gt;</ng:AccessControl></Application>',
      ),
    );
    assert.deepEqual(asText.accessControl, { type: 'GACL', content: '<gacl/>' });
    const asElements = adlOk(
      adlDoc(
        '<Application><ng:AccessControl><ng:Type>ARC</ng:Type><ng:Content><p:Policy xmlns:p="urn:arc"/></ng:Content></ng:AccessControl></Application>',
      ),
    );
    assert.deepEqual(asElements.accessControl, {
      type: 'ARC',
      content: `<p:Policy xmlns="${ADL_NS}" xmlns:ng="${NG_NS}" xmlns:p="urn:arc"/>`,
    });
    assert.match(
      adlError(adlDoc('<Application><ng:AccessControl>&lt;acl&gt;</ng:AccessControl></Application>')),
      /AccessControl is not well-formed XML/,
    );
  });
});

describe('ADL Resources', () => {
  it('converts memory and disk bytes to whole MiB (rounded up)', () => {
    const d = adlOk(
      adlDoc(
        '<Resources><IndividualPhysicalMemory>1</IndividualPhysicalMemory><IndividualVirtualMemory>3145728</IndividualVirtualMemory><DiskSpaceRequirement>1048577</DiskSpaceRequirement></Resources>',
      ),
    );
    assert.deepEqual([d.memoryBytes, d.virtualMemoryBytes, d.diskBytes], [MiB, 3 * MiB, 2 * MiB]);
    assert.match(
      adlError(adlDoc('<Resources><IndividualVirtualMemory>-5</IndividualVirtualMemory></Resources>')),
      /IndividualVirtualMemory must be a non-negative integer/,
    );
  });

  it('reads times as integer seconds only', () => {
    const d = adlOk(
      adlDoc(
        '<Resources><TotalCPUTime>100</TotalCPUTime><WallTime> 200 </WallTime><IndividualCPUTime>50</IndividualCPUTime></Resources>',
      ),
    );
    assert.deepEqual([d.cpuTimeSeconds, d.wallTimeSeconds], [100, 200]);
    assert.match(
      adlError(adlDoc('<Resources><WallTime>1h</WallTime></Resources>')),
      /WallTime must be a non-negative integer, not '1h'/,
    );
    assert.match(adlError(adlDoc('<Resources><TotalCPUTime>PT1H</TotalCPUTime></Resources>')), /TotalCPUTime/);
    assert.match(
      adlError(adlDoc('<Resources><IndividualCPUTime>x</IndividualCPUTime></Resources>')),
      /IndividualCPUTime/,
    );
  });

  it('reads runtime environments as Name-Version with options', () => {
    const d = adlOk(
      adlDoc(
        '<Resources><RuntimeEnvironment><Name>APPS/HEP/ATLAS</Name><Version>1.0</Version><Option>a</Option><Option>b</Option></RuntimeEnvironment><RuntimeEnvironment optional="true"><Name>ENV/X</Name></RuntimeEnvironment></Resources>',
      ),
    );
    assert.deepEqual(d.runtimeEnvironments, [
      { name: 'APPS/HEP/ATLAS-1.0', options: ['a', 'b'] },
      { name: 'ENV/X', options: [], optional: true },
    ]);
    assert.match(
      adlError(
        adlDoc('<Resources><RuntimeEnvironment optional="yes"><Name>ENV/X</Name></RuntimeEnvironment></Resources>'),
      ),
      /attribute optional/,
    );
    assert.equal(
      adlError(adlDoc('<Resources><RuntimeEnvironment><Version>1</Version></RuntimeEnvironment></Resources>')),
      'RuntimeEnvironment without Name',
    );
  });

  it('reads slot requirements', () => {
    const d = adlOk(
      adlDoc(
        '<Resources><SlotRequirement><NumberOfSlots>6</NumberOfSlots><SlotsPerHost useNumberOfSlots="true">1</SlotsPerHost><ExclusiveExecution>true</ExclusiveExecution></SlotRequirement></Resources>',
      ),
    );
    assert.deepEqual([d.count, d.countPerNode, d.exclusiveExecution], [6, 6, true]);
    const noHost = adlOk(
      adlDoc(
        '<Resources><SlotRequirement><NumberOfSlots>2</NumberOfSlots><ExclusiveExecution>true</ExclusiveExecution></SlotRequirement></Resources>',
      ),
    );
    assert.deepEqual([noHost.count, noHost.countPerNode, noHost.exclusiveExecution], [2, undefined, undefined]);
    const odd = adlOk(
      adlDoc(
        '<Resources><SlotRequirement><NumberOfSlots>2</NumberOfSlots><SlotsPerHost>1</SlotsPerHost><ExclusiveExecution>sometimes</ExclusiveExecution></SlotRequirement></Resources>',
      ),
    );
    assert.equal(odd.exclusiveExecution, undefined);
    assert.match(
      adlError(adlDoc('<Resources><SlotRequirement><NumberOfSlots>two</NumberOfSlots></SlotRequirement></Resources>')),
      /NumberOfSlots must be an integer/,
    );
  });

  it('validates what A-REX validates but does not act on', () => {
    adlOk(
      adlDoc(
        '<Resources><NodeAccess>inoutbound</NodeAccess><RemoteSessionAccess>false</RemoteSessionAccess><OperatingSystem><Name>centos</Name></OperatingSystem><Platform>amd64</Platform></Resources>',
      ),
    );
    assert.match(adlError(adlDoc('<Resources><NodeAccess>sideways</NodeAccess></Resources>')), /NodeAccess/);
    assert.match(
      adlError(adlDoc('<Resources><RemoteSessionAccess>yes</RemoteSessionAccess></Resources>')),
      /RemoteSessionAccess/,
    );
    assert.match(
      adlError(
        adlDoc(
          '<Resources><ParallelEnvironment><ProcessesPerSlot>many</ProcessesPerSlot></ParallelEnvironment></Resources>',
        ),
      ),
      /ProcessesPerSlot/,
    );
    assert.match(
      adlError(
        adlDoc('<Resources><ParallelEnvironment><Option><Value>v</Value></Option></ParallelEnvironment></Resources>'),
      ),
      /Option without Name/,
    );
  });

  it('keeps a Coprocessor for the acceptance checks', () => {
    assert.equal(adlOk(adlDoc('<Resources><Coprocessor>CUDA</Coprocessor></Resources>')).coprocessor, 'CUDA');
    assert.equal(adlOk(adlDoc('<Resources><Coprocessor/></Resources>')).coprocessor, undefined);
  });
});

describe('ADL DataStaging', () => {
  it('reads input sources: none = upload, URL = download, extra sources = replicas', () => {
    const d = adlOk(
      adlDoc(
        '<DataStaging><ClientDataPush>true</ClientDataPush><InputFile><Name>up</Name></InputFile><InputFile><Name>dl</Name><Source><URI>gsiftp://a/dl</URI><Option><Name>threads</Name><Value>2</Value></Option></Source><Source><URI>https://b/dl</URI></Source></InputFile><InputFile><Name>loc</Name><Source><URI>file:///tmp/loc</URI></Source><IsExecutable>1</IsExecutable></InputFile></DataStaging>',
      ),
    );
    assert.equal(d.clientDataPush, true);
    assert.deepEqual(d.inputFiles, [
      { name: 'up', executable: false },
      {
        name: 'dl',
        executable: false,
        source: 'gsiftp://a/dl',
        options: { threads: '2' },
        locations: [{ url: 'https://b/dl' }],
      },
      { name: 'loc', executable: true },
    ]);
    assert.match(
      adlError(
        adlDoc(
          '<DataStaging><InputFile><Name>x</Name><Source><URI>http://[bad</URI></Source></InputFile></DataStaging>',
        ),
      ),
      /Invalid URI 'http:\/\/\[bad' for input file 'x'/,
    );
  });

  it('reads IsExecutable leniently: anything but empty, false or 0 is true', () => {
    const flags = ['true', 'yes', 'false', '0', ''].map(
      (v) =>
        adlOk(
          adlDoc(`<DataStaging><InputFile><Name>f</Name><IsExecutable>${v}</IsExecutable></InputFile></DataStaging>`),
        ).inputFiles[0]?.executable,
    );
    assert.deepEqual(flags, [true, true, false, false, false]);
  });

  it('reads output targets with their flags, options and replicas', () => {
    const d = adlOk(
      adlDoc(
        '<DataStaging><OutputFile><Name>o</Name><Target><URI>https://se/o</URI><DelegationID>d9</DelegationID><Option><Name>location</Name><Value>https://se2/o</Value></Option><Option><Name>checksum</Name><Value>md5</Value></Option><Mandatory>true</Mandatory><CreationFlag>dontOverwrite</CreationFlag><UseIfFailure>1</UseIfFailure><UseIfCancel>true</UseIfCancel><UseIfSuccess>false</UseIfSuccess></Target><Target><URI>https://se3/o</URI></Target></OutputFile></DataStaging>',
      ),
    );
    assert.deepEqual(d.outputFiles, [
      {
        name: 'o',
        target: 'https://se/o',
        delegationId: 'd9',
        urlOptions: { checksum: 'md5' },
        locations: [{ url: 'https://se2/o' }, { url: 'https://se3/o' }],
        options: {
          useIfSuccess: false,
          useIfFailure: true,
          useIfCancel: true,
          mandatory: true,
          creationFlag: 'dontOverwrite',
        },
      },
    ]);
  });

  it('keeps prototype-ish option names as ordinary data and refuses them as states', () => {
    const d = adlOk(
      adlDoc(
        '<DataStaging><InputFile><Name>f</Name><Source><URI>https://h/f</URI><Option><Name>__proto__</Name><Value>v</Value></Option></Source></InputFile></DataStaging>',
      ),
    );
    assert.deepEqual(d.inputFiles[0]?.options, JSON.parse('{"__proto__":"v"}'));
    assert.match(
      adlError(
        adlDoc(
          '<Application><Notification><Protocol>email</Protocol><Recipient>a@b</Recipient><OnState>constructor</OnState></Notification></Application>',
        ),
      ),
      /OnState 'constructor'/,
    );
  });

  it('refuses malformed output targets', () => {
    assert.equal(
      adlError(adlDoc('<DataStaging><OutputFile><Target><URI>https://se/o</URI></Target></OutputFile></DataStaging>')),
      'OutputFile without Name',
    );
    assert.match(
      adlError(
        adlDoc(
          '<DataStaging><OutputFile><Name>o</Name><Target><URI>https://se/o</URI><UseIfFailure>yes</UseIfFailure></Target></OutputFile></DataStaging>',
        ),
      ),
      /UseIfFailure/,
    );
    assert.match(
      adlError(
        adlDoc(
          '<DataStaging><OutputFile><Name>o</Name><Target><URI>https://se/o</URI><Option><Name>location</Name><Value>file:///x</Value></Option></Target></OutputFile></DataStaging>',
        ),
      ),
      /Invalid location 'file:\/\/\/x'/,
    );
    assert.match(
      adlError(
        adlDoc(
          '<DataStaging><OutputFile><Name>o</Name><Target><URI>https://se/o</URI><Option><Value>v</Value></Option></Target></OutputFile></DataStaging>',
        ),
      ),
      /Target Option without Name/,
    );
  });
});

describe('ADL documents and bulk bodies', () => {
  it('splits <ActivityDescriptions> into standalone items that parse to the same job', () => {
    const r = parseAdlBody(bulkAdl(3));
    assert.equal(r.multi, true);
    assert.equal(r.items.length, 3);
    r.items.forEach((item, i) => {
      assert.ok(item.ok);
      if (!item.ok) return;
      assert.deepEqual(item.description.arguments, [String(i)]);
      assert.equal(item.description.delegationId, 'd1');
      assert.ok(
        item.text.startsWith(`<adl:ActivityDescription xmlns:adl="${ADL_NS}" xmlns:nordugrid-adl="${NG_NS}">`),
        item.text.slice(0, 200),
      );
      const again = parseAdlBody(item.text);
      assert.deepEqual(again.items[0], { ok: true, text: item.text, description: item.description });
    });
  });

  it('fails only the children that are not ADL ActivityDescriptions', () => {
    const r = parseAdlBody(
      `<ActivityDescriptions xmlns="${ADL_NS}"> text is ignored <ActivityDescription/><Other/><ActivityDescription><Resources><Benchmark/></Resources></ActivityDescription></ActivityDescriptions>`,
    );
    assert.deepEqual(
      r.items.map((i) => (i.ok ? 'ok' : i.reason.split('\n')[1])),
      ['ok', `root element {${ADL_NS}}Other is not {${ADL_NS}}ActivityDescription`, 'Benchmark is not supported'],
    );
  });

  it('gives an empty bulk document no items', () => {
    assert.deepEqual(splitSubmission(Buffer.from('<ActivityDescriptions/>')), {
      format: 'adl',
      multi: true,
      items: [],
    });
  });

  it('keeps the original text of a single description', () => {
    const r = splitSubmission(Buffer.from(`  \n${arcClientAdl}`));
    assert.equal(r.items[0]?.ok && r.items[0].text, arcClientAdl);
  });

  it('reports malformed XML with A-REX text first, then the XML problem', () => {
    const r = parseAdlBody(`<ActivityDescription xmlns="${ADL_NS}"><Application></ActivityDescription>`);
    const f = r.items[0];
    assert.ok(f && !f.ok);
    if (f.ok) return;
    assert.equal(f.code, 'CE_ERR_JOBDESC_XML_MALFORMED');
    assert.equal(f.status, 422);
    assert.match(f.reason, /^Unable to parse job description\.\nXML: .*\(line 1, column \d+\)$/);
  });
});
