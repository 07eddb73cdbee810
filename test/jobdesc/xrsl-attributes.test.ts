/** xRSL attribute semantics (A-REX's GRIDMANAGER dialect) mapped into the job model. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyJobDescription } from '../../src/vocabulary/job-description.js';
import { diracXrsl } from './fixtures/samples.js';
import { xrslError, xrslOk } from './helpers.js';

const MiB = 1024 * 1024;

describe('xRSL job basics', () => {
  it('maps a DIRAC pilot description completely', () => {
    const d = xrslOk(diracXrsl);
    assert.deepEqual(d, {
      ...emptyJobDescription('xrsl'),
      executable: 'dirac-pilot.py',
      inputFiles: [
        { name: 'dirac-pilot.py', executable: true },
        { name: 'pilot.json', executable: false },
      ],
      stdout: '1c2f6a.out',
      stderr: '1c2f6a.err',
      environment: [['DIRAC_PILOT_STAMP', '1c2f6a']],
      outputFiles: [
        { name: '1c2f6a.out', options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } },
        { name: '1c2f6a.err', options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } },
      ],
      queue: 'main',
      count: 8,
      countPerNode: 8,
      delegationId: 'a1b2c3d4e5f6',
    });
  });

  it('has no mandatory attribute: a job name alone is a staging-only job', () => {
    assert.deepEqual(xrslOk('&(jobname=x)'), { ...emptyJobDescription('xrsl'), jobName: 'x' });
  });

  it('ignores unknown and Globus attributes, whatever their values', () => {
    const d = xrslOk('&(executable=x)(frobnicate=(a b) c)(maxcputime=10 20)(project=p)(nodeaccess=inbound outbound)');
    assert.deepEqual(d, { ...emptyJobDescription('xrsl'), executable: 'x' });
  });

  it('refuses a repeated attribute, also when spelled differently', () => {
    assert.equal(xrslError('&(jobname=a)(JOB_NAME=b)'), "1:14: Attribute 'jobname' multiply defined");
    assert.equal(xrslError('&(arguments=a)(arguments=b)'), "1:16: Attribute 'arguments' multiply defined");
  });

  it('allows runtimeenvironment more than once, with options', () => {
    const d = xrslOk('&(runtimeenvironment="ENV/PROXY")(runtimeenvironment="APPS/HEP/ATLAS-1.0" "opt1" "opt2")');
    assert.deepEqual(d.runtimeEnvironments, [
      { name: 'ENV/PROXY', options: [] },
      { name: 'APPS/HEP/ATLAS-1.0', options: ['opt1', 'opt2'] },
    ]);
  });

  it('keeps an RTE version operator as a constraint', () => {
    assert.deepEqual(xrslOk('&(runtimeenvironment>=ENV/X)').runtimeEnvironments, [
      { name: 'ENV/X', options: [], constraint: '>=' },
    ]);
    assert.equal(
      xrslError('&(runtimeenvironment=)'),
      "1:3: Value of attribute 'runtimeenvironment' expected not to be empty",
    );
    assert.equal(
      xrslError('&(runtimeenvironment="")'),
      "1:3: Value of attribute 'runtimeenvironment' expected not to be empty",
    );
  });

  it('checks value shapes: single, list and sequence attributes', () => {
    assert.equal(xrslError('&(executable=(a))'), "1:3: Value of attribute 'executable' expected to be a string");
    assert.equal(xrslError('&(executable=)'), "1:3: Value of attribute 'executable' expected to be single value");
    assert.equal(xrslError('&(arguments=a (b))'), "1:3: Value of attribute 'arguments' is not a string");
    assert.equal(xrslError('&(environment="A")'), "1:3: Value of attribute 'environment' is not sequence");
    assert.equal(xrslError('&(inputfiles=("a" ("b")))'), "1:19: Value of attribute 'inputfiles' is not a string");
  });
});

describe('xRSL times and sizes (seconds by default, MB for memory and disk)', () => {
  it('reads cputime, walltime and lifetime in seconds unless a unit is given', () => {
    const d = xrslOk('&(cputime=120)(walltime="2 hours")(lifetime="P1D")');
    assert.deepEqual([d.cpuTimeSeconds, d.wallTimeSeconds, d.lifetimeSeconds], [120, 7200, 86400]);
  });

  it('treats 0 as not given', () => {
    const d = xrslOk('&(cputime=0)(walltime=0)(memory=0)(disk=0)');
    assert.deepEqual(
      [d.cpuTimeSeconds, d.wallTimeSeconds, d.memoryBytes, d.diskBytes],
      [undefined, undefined, undefined, undefined],
    );
  });

  it('refuses malformed durations with the attribute and value', () => {
    assert.equal(
      xrslError('&(walltime="1.5h")'),
      "1:3: Value of attribute 'walltime' is not a valid duration ('1.5h')",
    );
    assert.equal(
      xrslError('&(lifetime=forever)'),
      "1:3: Value of attribute 'lifetime' is not a valid duration ('forever')",
    );
  });

  it('reads memory and disk in MB and stores bytes', () => {
    const d = xrslOk('&(memory=2000)(disk=10)');
    assert.equal(d.memoryBytes, 2000 * MiB);
    assert.equal(d.diskBytes, 10 * MiB);
    assert.equal(
      xrslError('&(disk=1.5)'),
      "1:3: Value of attribute 'disk' must be a whole number of megabytes ('1.5')",
    );
    assert.equal(
      xrslError('&(memory=-1)'),
      "1:3: Value of attribute 'memory' must be a whole number of megabytes ('-1')",
    );
  });

  it('uses the first usable benchmark time as CPU time when cputime is absent', () => {
    assert.equal(xrslOk('&(benchmarks=("specint" "x" "10") ("specint2000" "1000" "600"))').cpuTimeSeconds, 600);
    assert.equal(xrslOk('&(cputime=60)(benchmarks=("specint2000" "1000" "600"))').cpuTimeSeconds, 60);
    assert.equal(
      xrslError('&(benchmarks=("specint2000" "1000"))'),
      "1:14: Value of attribute 'benchmarks' has wrong sequence length: Expected 3, found 2",
    );
  });

  it('reads starttime in the ARC time formats', () => {
    assert.equal(xrslOk('&(starttime="2030-01-02 03:04:05")').startTime, '2030-01-02T03:04:05.000Z');
    assert.equal(xrslOk('&(starttime=20300102030405Z)').startTime, '2030-01-02T03:04:05.000Z');
    assert.equal(xrslError('&(starttime=soon)'), "1:3: Value of attribute 'starttime' is not a valid time ('soon')");
  });
});

describe('xRSL files', () => {
  it('distinguishes client uploads (empty, path, file:) from URLs the service fetches', () => {
    const d = xrslOk(
      '&(inputfiles=("a" "") ("b" "/local/b") ("c" "rel/c") ("d" "file:///tmp/d") ("e" "gsiftp://se/e") ("f" "https://se/f"))',
    );
    assert.deepEqual(
      d.inputFiles.map((f) => [f.name, f.source]),
      [
        ['a', undefined],
        ['b', undefined],
        ['c', undefined],
        ['d', undefined],
        ['e', 'gsiftp://se/e'],
        ['f', 'https://se/f'],
      ],
    );
  });

  it('reads size[.checksum] sources as client uploads (GM dialect)', () => {
    const d = xrslOk('&(inputfiles=("a" "1024") ("b" "2048.cksum:1234") ("c" "0"))');
    assert.deepEqual(d.inputFiles, [
      { name: 'a', executable: false, size: 1024 },
      { name: 'b', executable: false, size: 2048, checksum: 'cksum:1234' },
      { name: 'c', executable: false, size: 0 },
    ]);
  });

  it('reads URL options, replica locations and per-file delegations', () => {
    const d = xrslOk(
      '&(inputfiles=("in" "https://a/in" "threads=4" "location=https://b/in" "cache=no" "delegationid=d7"))',
    );
    assert.deepEqual(d.inputFiles, [
      {
        name: 'in',
        executable: false,
        source: 'https://a/in',
        delegationId: 'd7',
        options: { threads: '4' },
        locations: [{ url: 'https://b/in', options: { cache: 'no' } }],
      },
    ]);
  });

  it('refuses broken file entries with the file named', () => {
    assert.equal(
      xrslError('&(inputfiles=("" "https://a/b"))'),
      "1:3: First value of 'inputfiles' attribute (filename) cannot be empty",
    );
    assert.equal(
      xrslError('&(inputfiles=("a" "http://[broken"))'),
      "1:3: Invalid URL 'http://[broken' for input file 'a'",
    );
    assert.equal(
      xrslError('&(inputfiles=("a" "https://h/a" "noequals"))'),
      "1:3: Invalid URL option syntax in option 'noequals' for input file 'a'",
    );
    assert.equal(
      xrslError('&(inputfiles=("a" "https://h/a" "location=nope"))'),
      "1:3: Invalid URL 'nope' for input file 'a'",
    );
    assert.equal(
      xrslError('&(outputfiles=("o"))'),
      "1:3: At least two values are needed for the 'outputfiles' attribute",
    );
    assert.equal(
      xrslError('&(outputfiles=("" ""))'),
      "1:3: First value of 'outputfiles' attribute (filename) cannot be empty",
    );
    assert.equal(xrslError('&(outputfiles=("o" "gsiftp://[x"))'), "1:3: Invalid URL 'gsiftp://[x' for output file 'o'");
  });

  it('keeps outputs without a URL target in the session, uploads the others', () => {
    const d = xrslOk(
      '&(outputfiles=("k" "") ("f" "file:///x") ("u" "davs://se/u" "checksum=adler32") ("@list" "") ("/" ""))',
    );
    assert.deepEqual(
      d.outputFiles.map((f) => [f.name, f.target, f.urlOptions]),
      [
        ['k', undefined, undefined],
        ['f', undefined, undefined],
        ['u', 'davs://se/u', { checksum: 'adler32' }],
        ['@list', undefined, undefined],
        ['/', undefined, undefined],
      ],
    );
  });

  it('marks executables, which must be input files', () => {
    const d = xrslOk('&(inputfiles=("run.sh" "") ("lib.so" ""))(executables=run.sh)');
    assert.deepEqual(
      d.inputFiles.map((f) => f.executable),
      [true, false],
    );
    assert.equal(
      xrslError('&(inputfiles=("run.sh" ""))(executables=other.sh)'),
      "1:29: File 'other.sh' in the 'executables' attribute is not present in the 'inputfiles' attribute",
    );
  });

  it('adds cache= to downloaded non-executable inputs and threads= to every transfer', () => {
    const d = xrslOk(
      '&(inputfiles=("a" "https://h/a") ("b" "https://h/b") ("c" ""))(executables=b)(cache=no)(ftpthreads=3)(outputfiles=("o" "https://h/o") ("k" ""))',
    );
    assert.deepEqual(
      d.inputFiles.map((f) => f.options),
      [{ cache: 'no', threads: '3' }, { threads: '3' }, undefined],
    );
    assert.deepEqual(
      d.outputFiles.map((f) => f.urlOptions),
      [{ threads: '3' }, undefined],
    );
    assert.equal(
      xrslError('&(ftpthreads=11)'),
      '1:3: The value of the ftpthreads attribute must be a number from 1 to 10',
    );
    assert.equal(
      xrslError('&(ftpthreads=0)'),
      '1:3: The value of the ftpthreads attribute must be a number from 1 to 10',
    );
  });

  it('honours join by sending stderr to stdout, and derives join from equal names', () => {
    const joined = xrslOk('&(stdout=out)(join=yes)');
    assert.deepEqual([joined.stdout, joined.stderr, joined.join], ['out', 'out', true]);
    assert.equal(xrslOk('&(stdout=o)(stderr=o)').join, true);
    const separate = xrslOk('&(stdout=o)(stderr=e)(join=yes)');
    assert.deepEqual([separate.stderr, separate.join], ['e', false]);
    assert.equal(xrslOk('&(join=yes)').join, false);
  });
});

describe('xRSL slots, delegation, queue and the rest', () => {
  it('reads count, countpernode and exclusiveexecution', () => {
    const d = xrslOk('&(count=16)(countpernode=8)(exclusiveexecution=YES)');
    assert.deepEqual([d.count, d.countPerNode, d.exclusiveExecution], [16, 8, true]);
    assert.equal(xrslOk('&(exclusiveexecution=false)').exclusiveExecution, false);
    assert.equal(
      xrslError('&(count=2)(countpernode=two)'),
      "1:12: Value of 'countpernode' attribute must be an integer",
    );
    assert.equal(
      xrslError('&(exclusiveexecution=maybe)'),
      "1:3: Value of 'exclusiveexecution' attribute must either be 'yes' or 'no'",
    );
  });

  it('passes count=0 and countpernode=0 to the acceptance checks (which refuse them)', () => {
    const d = xrslOk('&(count=4)(countpernode=0)');
    assert.equal(d.countPerNode, 0);
  });

  it('accepts only = for delegationid and queue', () => {
    assert.equal(xrslOk('&(delegationid=abc)').delegationId, 'abc');
    assert.equal(
      xrslError('&(delegationid!=abc)'),
      `1:3: Invalid comparison operator '!=' used at 'delegationid' attribute, only "=" is allowed.`,
    );
    assert.equal(
      xrslError('&(queue>=main)'),
      `1:3: Invalid comparison operator '>=' used at 'queue' attribute in 'GRIDMANAGER' dialect, only "=" is allowed`,
    );
  });

  it('reads rerun, priority (clamped), gmlog, dryrun', () => {
    const d = xrslOk('&(rerun=3)(priority=500)(gmlog=log)(dryrun=yes)');
    assert.deepEqual([d.rerun, d.priority, d.logDir, d.dryRun], [3, 100, 'log', true]);
    assert.equal(xrslOk('&(priority=0)').priority, undefined);
    assert.equal(xrslOk('&(priority=42)').priority, 42);
    assert.equal(xrslOk('&(dryrun=no)').dryRun, false);
    assert.equal(xrslError('&(rerun=-1)'), "1:3: Value of attribute 'rerun' must be a non-negative integer");
    assert.equal(xrslError('&(priority=high)'), "1:3: Value of attribute 'priority' must be an integer");
    assert.equal(xrslError('&(dryrun=perhaps)'), "1:3: Value of 'dryrun' attribute must either be 'yes' or 'no'");
  });

  it('reads notify entries with flags or the default flags', () => {
    const d = xrslOk('&(notify="a@x.org" "ce b@y.org c@z.org")');
    assert.deepEqual(d.notify, [
      { states: ['PREPARING', 'FINISHED'], recipients: ['a@x.org'] },
      { states: ['CANCELING', 'FINISHED'], recipients: ['b@y.org', 'c@z.org'] },
    ]);
    assert.equal(
      xrslError('&(notify="bz a@x.org")'),
      "1:3: Syntax error in 'notify' attribute value ('bz a@x.org'), it contains unknown state flags",
    );
    assert.equal(
      xrslError('&(notify="be a@x.org nobody")'),
      "1:3: Syntax error in 'notify' attribute value ('be a@x.org nobody'), it must only contain email addresses after state flag(s)",
    );
    assert.equal(
      xrslError('&(notify="")'),
      "1:3: Syntax error in 'notify' attribute value (''), it must contain an email address",
    );
  });

  it('keeps known actions, drops unknown ones', () => {
    assert.equal(xrslOk('&(action=request)').action, 'request');
    assert.equal(xrslOk('&(action=restart)').action, 'restart');
    assert.equal(xrslOk('&(action=dance)').action, undefined);
  });

  it('keeps valid jobreport and credentialserver URLs, ignores invalid ones', () => {
    const d = xrslOk('&(jobreport=https://sgas.example.org:8443/sgas)(credentialserver=myproxy://mp.example.org)');
    assert.deepEqual(d.jobReportUrls, ['https://sgas.example.org:8443/sgas']);
    assert.equal(d.credentialServer, 'myproxy://mp.example.org');
    const bad = xrslOk('&(jobreport=not-a-url)(credentialserver="http://[x")');
    assert.deepEqual([bad.jobReportUrls, bad.credentialServer], [[], undefined]);
  });

  it('extracts an ACL document; ignores one that is not XML', () => {
    const d = xrslOk(
      `&(acl='<acl><Type>GACL</Type><Content><gacl><entry><any-user/><allow><read/></allow></entry></gacl></Content></acl>')`,
    );
    assert.deepEqual(d.accessControl, {
      type: 'GACL',
      content: '<gacl><entry><any-user/><allow><read/></allow></entry></gacl>',
    });
    assert.deepEqual(xrslOk(`&(acl='<acl><Type>ARC</Type></acl>')`).accessControl, { type: 'ARC' });
    assert.equal(xrslOk(`&(acl='<broken')`).accessControl, undefined);
    assert.equal(xrslOk(`&(acl='<!DOCTYPE x [<!ENTITY a "b">]><x/>')`).accessControl, undefined);
  });

  it('treats empty strings as not given for names, paths, queue and delegation', () => {
    const d = xrslOk(
      '&(executable="")(stdin="")(stdout="")(stderr="")(gmlog="")(jobname="")(queue="")(delegationid="")',
    );
    assert.deepEqual(d, emptyJobDescription('xrsl'));
  });

  it('keeps prototype-ish names as ordinary data', () => {
    const d = xrslOk(
      '&(constructor=x)(toString=y)(__proto__=z)(inputfiles=("a" "https://h/a" "__proto__=p" "constructor=c"))(notify="cq a@b")',
    );
    assert.deepEqual(d.inputFiles[0]?.options, JSON.parse('{"__proto__":"p","constructor":"c"}'));
    assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
    assert.equal(
      xrslError('&(notify="constructor a@b")'),
      "1:3: Syntax error in 'notify' attribute value ('constructor a@b'), it contains unknown state flags",
    );
  });

  it('never produces -0 (JSON cannot carry it)', () => {
    const d = xrslOk('&(count=-0)(priority=-0)');
    assert.ok(Object.is(d.count, 0));
    assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
  });

  it('turns a bare relation operand of + into a standalone description', async () => {
    const { splitSubmission } = await import('../../src/jobdesc/split-submission.js');
    const r = splitSubmission(Buffer.from('+(executable=/bin/a)(&(executable=/bin/b))'));
    assert.deepEqual(
      r.items.map((i) => (i.ok ? [i.text, i.description.executable] : i.reason)),
      [
        ['&(executable=/bin/a)', '/bin/a'],
        ['&(executable=/bin/b)', '/bin/b'],
      ],
    );
  });

  it('produces plain data that survives a JSON round trip unchanged', () => {
    const d = xrslOk(`${diracXrsl}(notify="a@b.c")(starttime="2030-01-01")(acl='<a><Content>x</Content></a>')`);
    assert.deepEqual(JSON.parse(JSON.stringify(d)), d);
  });
});
