/** Acceptance checks: A-REX's order and texts, Ceres's extra checks, normalisation. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkAcceptance, leavesSession, type AcceptanceContext } from '../../src/jobdesc/check-acceptance.js';
import { emptyJobDescription, type JobDescription } from '../../src/vocabulary/job-description.js';
import { xrslOk } from './helpers.js';
import { s3UrlRefusal } from '../../src/staging/gfal2/s3-endpoints.js';

const ctx: AcceptanceContext = {
  queues: [
    { name: 'main' },
    {
      name: 'long',
      maxWallTimeSeconds: 3600,
      minWallTimeSeconds: 60,
      maxCpuTimeSeconds: 7200,
      maxMemoryBytes: 1024,
      maxSlotsPerJob: 4,
    },
  ],
  runtimeEnvironments: ['ENV/PROXY', 'APPS/HEP/ATLAS-1.0'],
};

function job(extra: Partial<JobDescription> = {}): JobDescription {
  return { ...emptyJobDescription('xrsl'), executable: '/bin/true', ...extra };
}

function refused(d: JobDescription, c: AcceptanceContext = ctx): { code: string; reason: string; status: number } {
  const r = checkAcceptance(d, c);
  assert.equal(r.ok, false, 'expected a refusal');
  if (r.ok) throw new Error('unreachable');
  assert.ok(r.status > 400 && r.status < 500, `status ${r.status}`);
  return { code: r.code, reason: r.reason, status: r.status };
}

function accepted(d: JobDescription, c: AcceptanceContext = ctx): JobDescription {
  const r = checkAcceptance(d, c);
  assert.equal(r.ok, true, r.ok ? '' : r.reason);
  if (!r.ok) throw new Error('unreachable');
  return r.description;
}

describe('checkAcceptance: A-REX checks and texts', () => {
  it('refuses RTE version constraints', () => {
    assert.deepEqual(refused(job({ runtimeEnvironments: [{ name: 'ENV/PROXY', options: [], constraint: '>=' }] })), {
      code: 'CE_ERR_JOBDESC_RTE_UNRESOLVED',
      reason: 'Runtime environments have not been resolved.',
      status: 422,
    });
  });

  it('refuses an ACL without Content, and one of an unknown type', () => {
    assert.equal(
      refused(job({ accessControl: { type: 'GACL' } })).reason,
      'acl element wrongly formatted - missing Content element',
    );
    assert.equal(
      refused(job({ accessControl: { type: 'XACML', content: '<p/>' } })).reason,
      'ARC: unsupported ACL type specified: XACML',
    );
    accepted(job({ accessControl: { type: 'ARC', content: '<p/>' } }));
    accepted(job({ accessControl: { content: '<gacl/>' } }));
  });

  it('refuses grid-manager actions other than request', () => {
    for (const action of ['cancel', 'clean', 'renew', 'restart'] as const) {
      assert.equal(refused(job({ action })).reason, `Wrong action in job request: ${action}`);
    }
    accepted(job({ action: 'request' }));
  });

  it('resolves the queue: description, then 1.1 parameter, then default, then first allowed', () => {
    assert.equal(
      accepted(job({ queue: 'long' }), { ...ctx, requestQueue: 'main', defaultQueue: 'main' }).queue,
      'long',
    );
    assert.equal(accepted(job(), { ...ctx, requestQueue: 'long', defaultQueue: 'main' }).queue, 'long');
    assert.equal(accepted(job(), { ...ctx, defaultQueue: 'long' }).queue, 'long');
    assert.equal(accepted(job(), ctx).queue, 'main');
    assert.equal(accepted(job(), { ...ctx, authorisedQueues: ['long'] }).queue, 'long');
  });

  it("uses A-REX's (swapped) texts for unknown and forbidden queues", () => {
    assert.deepEqual(refused(job({ queue: 'nosuch' })), {
      code: 'CE_ERR_JOBDESC_QUEUE_UNKNOWN',
      reason: 'Requested queue nosuch is not allowed for this user',
      status: 422,
    });
    assert.deepEqual(
      refused(job({ queue: 'long' }), {
        ...ctx,
        queues: ctx.queues.map((q) => (q.name === 'long' ? { ...q, allow: ['atlas', 'cms'] } : q)),
        authorisedQueues: ['main'],
        callerGroups: ['local', 'ops'],
      }),
      {
        code: 'CE_ERR_JOBDESC_QUEUE_FORBIDDEN',
        reason:
          "Requested queue long does not match any of available queues: queue long is open to the authorization groups atlas, cms, and the caller's groups are local, ops; " +
          "submit to a queue the caller may use (main), or ask the site to add one of the caller's groups to the queue's allow list",
        status: 403,
      },
    );
    assert.deepEqual(refused(job(), { ...ctx, authorisedQueues: [] }), {
      code: 'CE_ERR_JOBDESC_NO_QUEUE',
      reason: 'Request has no queue defined and none is allowed for this user',
      status: 403,
    });
    assert.equal(
      refused(job(), { ...ctx, requestQueue: 'gone' }).reason,
      'Requested queue gone is not allowed for this user',
    );
  });

  it('maps WLCG <queue>_<VO> names to the queue', () => {
    assert.equal(accepted(job({ queue: 'long_atlas' })).queue, 'long');
    assert.equal(accepted(job({ queue: 'main_lhcb_prod' })).queue, 'main');
    assert.equal(refused(job({ queue: '_main' })).code, 'CE_ERR_JOBDESC_QUEUE_UNKNOWN');
  });

  it('refuses pre- and post-executables, append, coprocessors', () => {
    assert.equal(
      refused(job({ preExecutables: [{ path: '/x', arguments: [] }] })).reason,
      'Pre-executables are not supported by this service',
    );
    assert.equal(
      refused(job({ postExecutables: [{ path: '/x', arguments: [] }] })).reason,
      'Post-executables are not supported by this service',
    );
    const appended = job({
      outputFiles: [
        {
          name: 'o',
          target: 'https://se/o',
          options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false, creationFlag: 'append' },
        },
      ],
    });
    assert.equal(refused(appended).reason, 'Unsupported creation mode for Target');
    assert.equal(refused(job({ coprocessor: 'CUDA' })).reason, 'Coprocessor is not supported yet.');
  });

  it('refuses slots per node that exceed or do not divide the slot count', () => {
    assert.equal(
      refused(job({ count: 4, countPerNode: 8 })).reason,
      'SlotsPerHost exceeding NumberOfSlots is not supported',
    );
    assert.equal(
      refused(job({ count: 6, countPerNode: 4 })).reason,
      'SlotsPerHost exceeding NumberOfSlots is not supported',
    );
    accepted(job({ count: 8, countPerNode: 4 }));
    accepted(job({ count: 3 }));
  });

  it('refuses countpernode=0 and non-positive counts (A-REX would divide by zero)', () => {
    const zero = refused(xrslOk('&(executable=/bin/true)(count=4)(countpernode=0)'));
    assert.equal(zero.code, 'CE_ERR_JOBDESC_SLOTS_INVALID');
    assert.match(zero.reason, /must be at least 1, got 4 and 0/);
    assert.equal(refused(job({ count: 0 })).code, 'CE_ERR_JOBDESC_SLOTS_INVALID');
    assert.equal(refused(job({ count: -2, countPerNode: -1 })).code, 'CE_ERR_JOBDESC_SLOTS_INVALID');
  });

  it('refuses a dynamic output list without any delegation; per-file or parameter delegations do', () => {
    const dyn = (extra: Partial<JobDescription> = {}): JobDescription =>
      job({
        outputFiles: [{ name: '@list', options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } }],
        ...extra,
      });
    assert.equal(refused(dyn()).reason, 'Dynamic output files and no delegation assigned to job are incompatible.');
    assert.equal(accepted(dyn({ delegationId: 'main-d' })).delegationId, 'main-d');
    assert.equal(accepted(dyn(), { ...ctx, requestDelegationId: 'param-d' }).delegationId, 'param-d');
    assert.equal(
      accepted(dyn({ inputFiles: [{ name: 'i', source: 'https://s/i', executable: false, delegationId: 'file-d' }] }))
        .delegationId,
      'file-d',
    );
  });

  it('lets the description delegation win over the 1.1 parameter, and leaves none when neither is given', () => {
    assert.equal(
      accepted(job({ delegationId: 'desc' }), { ...ctx, requestDelegationId: 'param' }).delegationId,
      'desc',
    );
    assert.equal(accepted(job(), { ...ctx, requestDelegationId: 'param' }).delegationId, 'param');
    assert.equal(
      accepted(job({ inputFiles: [{ name: 'i', executable: false, delegationId: 'file-d' }] })).delegationId,
      undefined,
    );
  });

  it('applies the checks in A-REX order: the first failure wins', () => {
    const everything = job({
      runtimeEnvironments: [{ name: 'X', options: [], constraint: '<' }],
      action: 'cancel',
      queue: 'nosuch',
      preExecutables: [{ path: '/x', arguments: [] }],
      coprocessor: 'CUDA',
    });
    const order: string[] = [];
    let d = everything;
    for (;;) {
      const r = checkAcceptance(d, ctx);
      if (r.ok) break;
      order.push(r.code);
      if (r.code === 'CE_ERR_JOBDESC_RTE_UNRESOLVED') d = { ...d, runtimeEnvironments: [] };
      else if (r.code === 'CE_ERR_JOBDESC_WRONG_ACTION') d = { ...d, action: 'request' };
      else if (r.code === 'CE_ERR_JOBDESC_QUEUE_UNKNOWN') d = { ...d, queue: 'main' };
      else if (r.code === 'CE_ERR_JOBDESC_PRE_EXECUTABLE') d = { ...d, preExecutables: [] };
      else if (r.code === 'CE_ERR_JOBDESC_COPROCESSOR') d = { ...d, coprocessor: '' };
      else break;
    }
    assert.deepEqual(order, [
      'CE_ERR_JOBDESC_RTE_UNRESOLVED',
      'CE_ERR_JOBDESC_WRONG_ACTION',
      'CE_ERR_JOBDESC_QUEUE_UNKNOWN',
      'CE_ERR_JOBDESC_PRE_EXECUTABLE',
      'CE_ERR_JOBDESC_COPROCESSOR',
    ]);
  });
});

describe('checkAcceptance: checks A-REX leaves to later stages', () => {
  it('refuses file names that leave the session directory', () => {
    for (const d of [
      job({ stdout: '../out' }),
      job({ stderr: 'a/../../e' }),
      job({ stdin: '/../in' }),
      job({ logDir: '..' }),
      job({ inputFiles: [{ name: 'x/../../y', executable: false }] }),
      job({
        outputFiles: [{ name: '@../list', options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } }],
        delegationId: 'd',
      }),
    ]) {
      const r = refused(d);
      assert.equal(r.code, 'CE_ERR_JOBDESC_BAD_PATH');
      assert.match(r.reason, /^File name '.*' must stay inside the session directory$/);
    }
    assert.equal(leavesSession('a\0b'), true);
    assert.equal(leavesSession('..hidden/x..'), false);
    assert.equal(leavesSession('/'), false);
    accepted(job({ stdout: '/out', stderr: 'dir/err', inputFiles: [{ name: '/abs/in', executable: false }] }));
  });

  it('refuses a log directory (gmlog) that is absolute or the session directory itself', () => {
    for (const logDir of ['/abs', '/', '.', './', 'a/../..', './/.']) {
      const r = refused(job({ logDir }));
      assert.equal(r.code, 'CE_ERR_JOBDESC_BAD_PATH', logDir);
      assert.match(r.reason, /^File name '.*' must stay inside the session directory$/);
    }
    // The service writes there: a name below the session is what it needs.
    for (const logDir of ['gmlog', 'logs/gm', './gmlog', 'gmlog/']) accepted(job({ logDir }));
  });

  it('refuses runtime environments that are not enabled, unless optional', () => {
    assert.equal(
      refused(job({ runtimeEnvironments: [{ name: 'ENV/NOPE', options: [] }] })).reason,
      'Requested RunTimeEnvironment ENV/NOPE is missing, broken or not enabled.',
    );
    const d = accepted(
      job({
        runtimeEnvironments: [
          { name: 'ENV/NOPE', options: [], optional: true },
          { name: 'ENV/PROXY', options: ['x'] },
        ],
      }),
    );
    assert.deepEqual(d.runtimeEnvironments, [{ name: 'ENV/PROXY', options: ['x'] }]);
    assert.equal(
      refused(job({ runtimeEnvironments: [{ name: 'ENV/PROXY', options: [] }] }), { ...ctx, runtimeEnvironments: [] })
        .code,
      'CE_ERR_JOBDESC_RTE_UNKNOWN',
    );
  });

  it('refuses requests over the queue limits, naming the limit', () => {
    assert.equal(
      refused(job({ queue: 'long', wallTimeSeconds: 3601 })).reason,
      'Requested wall time (3601 s) exceeds the limit of queue long (3600 s)',
    );
    assert.equal(
      refused(job({ queue: 'long', cpuTimeSeconds: 7201 })).reason,
      'Requested CPU time (7201 s) exceeds the limit of queue long (7200 s)',
    );
    assert.equal(
      refused(job({ queue: 'long', memoryBytes: 2048 })).reason,
      'Requested memory (2048 bytes) exceeds the limit of queue long (1024 bytes)',
    );
    assert.equal(
      refused(job({ queue: 'long', count: 8 })).reason,
      'Requested slot count (8 slots) exceeds the limit of queue long (4 slots)',
    );
    assert.equal(
      refused(job({ queue: 'long', wallTimeSeconds: 59 })).reason,
      'Requested wall time (59 s) is below the minimum of queue long (60 s)',
    );
    accepted(job({ queue: 'long', wallTimeSeconds: 3600, cpuTimeSeconds: 7200, memoryBytes: 1024, count: 4 }));
    accepted(job({ queue: 'long' }));
    accepted(job({ queue: 'main', wallTimeSeconds: 10 ** 9 }));
  });
});

describe('checkAcceptance: normalisation', () => {
  it('caps lifetime and rerun, leaves the input description untouched', () => {
    const input = job({ lifetimeSeconds: 10 ** 8, rerun: 50 });
    const out = accepted(input, { ...ctx, maxLifetimeSeconds: 86400, maxRerun: 3 });
    assert.deepEqual([out.lifetimeSeconds, out.rerun], [86400, 3]);
    assert.deepEqual([input.lifetimeSeconds, input.rerun, input.queue], [10 ** 8, 50, undefined]);
    assert.equal(accepted(job({ rerun: 50 })).rerun, 5, 'A-REX default maxrerun is 5');
    assert.equal(
      accepted(job({ lifetimeSeconds: 60, rerun: 1 }), { ...ctx, maxLifetimeSeconds: 86400 }).lifetimeSeconds,
      60,
    );
  });

  it('returns JSON-serialisable data', () => {
    const out = accepted(
      xrslOk('&(executable=x)(inputfiles=("a" "https://h/a" "threads=2"))(runtimeenvironment=ENV/PROXY)'),
    );
    assert.deepEqual(JSON.parse(JSON.stringify(out)), out);
  });
});

describe('checkAcceptance: transfer protocols', () => {
  // As the service wires it: gfal2's xrootd plugin installed, nothing for gsiftp.
  const known = (s: string): boolean => ['http', 'https', 'dav', 'davs', 'root', 'xroot'].includes(s);
  const withSchemes: AcceptanceContext = { ...ctx, transferScheme: known };

  it('refuses an input whose protocol nothing here speaks, naming the protocol and the file', () => {
    const r = refused(
      job({ inputFiles: [{ name: 'in.dat', source: 'gsiftp://se.example.org/d/in.dat', executable: false }] }),
      withSchemes,
    );
    assert.equal(r.code, 'CE_ERR_JOBDESC_SCHEME_UNSUPPORTED');
    assert.equal(r.status, 422);
    assert.match(r.reason, /Protocol 'gsiftp'.*'in\.dat'/);
  });

  it('refuses an output target of an unknown protocol, in any case', () => {
    const r = refused(
      job({
        outputFiles: [
          {
            name: 'out',
            target: 'SRM://se.example.org/d/out',
            options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false },
          },
        ],
      }),
      withSchemes,
    );
    assert.equal(r.code, 'CE_ERR_JOBDESC_SCHEME_UNSUPPORTED');
    assert.match(r.reason, /Protocol 'srm'.*'out'/);
  });

  it('accepts root://, https:// and client files when the registry knows them', () => {
    accepted(
      job({
        inputFiles: [
          { name: 'a', source: 'root://127.0.0.1:1094//data/a', executable: false },
          { name: 'b', source: 'https://se.example.org/b', executable: false },
          { name: 'c', executable: false },
        ],
        outputFiles: [
          {
            name: 'o',
            target: 'xroot://127.0.0.1:1094//data/o',
            options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false },
          },
        ],
      }),
      withSchemes,
    );
  });

  it('accepts any protocol when no registry is given (stage-in judges it)', () => {
    accepted(job({ inputFiles: [{ name: 'a', source: 'gsiftp://se.example.org/a', executable: false }] }));
  });
});

describe('checkAcceptance: S3 endpoints (the site keys per endpoint)', () => {
  const endpoint = { accessKeyFile: '/k/a', secretKeyFile: '/k/s', region: 'us-east-1', pathStyle: true };
  const withS3: AcceptanceContext = {
    ...ctx,
    transferScheme: (s) => ['https', 's3', 's3s'].includes(s),
    transferEndpoint: s3UrlRefusal([
      { host: 's3.example.org', ...endpoint },
      { host: 'atlas-s3.example.org:9000', ...endpoint, allowGroups: ['atlas'] },
    ]),
  };
  const input = (source: string): JobDescription =>
    job({ inputFiles: [{ name: 'in.dat', source, executable: false }] });

  it('refuses an s3:// URL naming an endpoint without keys, naming the file and the endpoint (422)', () => {
    const r = refused(input('s3://other-tenant.example.org/bucket/in.dat'), withS3);
    assert.equal(r.code, 'CE_ERR_JOBDESC_ENDPOINT_REFUSED');
    assert.equal(r.status, 422);
    assert.match(r.reason, /'in\.dat'.*no S3 keys .*other-tenant\.example\.org/);
  });

  it('refuses a configured host on another port, and an output target too', () => {
    assert.match(refused(input('s3s://s3.example.org:8443/b/in.dat'), withS3).reason, /s3\.example\.org:8443/);
    const out = job({
      outputFiles: [
        {
          name: 'o',
          target: 's3://elsewhere.example.org/b/o',
          options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false },
        },
      ],
    });
    assert.equal(refused(out, withS3).code, 'CE_ERR_JOBDESC_ENDPOINT_REFUSED');
  });

  it('refuses a restricted endpoint to a caller outside its groups, accepts it for one inside', () => {
    const url = 's3://atlas-s3.example.org:9000/b/in.dat';
    const r = refused(input(url), { ...withS3, callerGroups: ['cms'] });
    assert.match(r.reason, /not open to the caller's authorization groups/);
    assert.equal(refused(input(url), withS3).code, 'CE_ERR_JOBDESC_ENDPOINT_REFUSED', 'no groups known: refused');
    accepted(input(url), { ...withS3, callerGroups: ['cms', 'atlas'] });
  });

  it('accepts a configured open endpoint and leaves other protocols alone', () => {
    accepted(input('s3s://s3.example.org/bucket/in.dat'), withS3);
    accepted(input('https://other-tenant.example.org/in.dat'), withS3);
  });
});

describe('a job against each node together (nodeShapes: a job runs on one node)', () => {
  const M = 2 ** 20;
  // One node has 16 CPUs and 4 GiB, another 2 CPUs and 64 GiB, a third 8 and 16 GiB.
  const nodes: AcceptanceContext = {
    ...ctx,
    queues: [
      {
        name: 'kube',
        maxSlotsPerJob: 16,
        maxJobMemoryBytes: 64 * 1024 * M,
        nodeShapes: [
          { slots: 16, memoryBytes: 4096 * M },
          { slots: 8, memoryBytes: 16384 * M },
          { slots: 2, memoryBytes: 65536 * M },
        ],
      },
    ],
  };
  const kube = (count: number | undefined, memoryMiB: number | undefined): JobDescription =>
    job({ queue: 'kube', count, ...(memoryMiB !== undefined ? { memoryBytes: memoryMiB * M } : {}) });

  it('refuses slots and memory that no one node has together, naming the memory limit for that many slots', () => {
    const r = refused(kube(12, 2048), nodes);
    assert.equal(r.code, 'CE_ERR_JOBDESC_QUEUE_LIMIT');
    assert.equal(
      r.reason,
      `Requested memory of the job (${24576 * M} bytes) exceeds the limit of queue kube for 12 slots (${4096 * M} bytes, the most memory of one node with 12 CPUs or more)`,
    );
    assert.match(refused(kube(3, 8192), nodes).reason, /for 3 slots \(17179869184 bytes/);
    // One slot by default: the 64 GiB node, and one byte more fits nowhere.
    assert.match(refused(kube(undefined, 65537), nodes).reason, /memory of the job/);
  });

  it('accepts what one node holds, at each edge; no memory asked: the slots alone', () => {
    for (const [count, mem] of [
      [16, 256],
      [8, 2048],
      [2, 32768],
      [1, 65536],
      [16, undefined],
    ] as const)
      accepted(kube(count, mem), nodes);
  });

  it('a job over the slots of every node gets the slot limit, not this one; no shapes: no such check', () => {
    assert.match(refused(kube(17, 1), nodes).reason, /^Requested slot count \(17 slots\)/);
    accepted(job({ queue: 'main', count: 64, memoryBytes: 64 * 1024 * M }));
  });
});
