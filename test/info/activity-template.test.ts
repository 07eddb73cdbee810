// The ComputingActivity written from its compiled template (src/doc/template.ts) is byte
// for byte what the hand-written element builder it replaced gave (legacy-activity.ts),
// in JSON, XML and as a tree, alone and inside bulk info answers, for random job views
// and for job records read back from a real store in every state.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { el, type XmlElement } from '../../src/doc/element.js';
import { renderJsonMember } from '../../src/doc/render-json.js';
import { renderXml } from '../../src/doc/render-xml.js';
import type { ActivityContext, ActivityView } from '../../src/info/activity-view.js';
import { computingActivity } from '../../src/info/computing-activity.js';
import { bulkPieces, JOBS_FORCED_ARRAYS, renderBulk } from '../../src/api/rest/jobs/render.js';
import { renderDoc } from '../../src/http/send.js';
import { activityDocument, activityWriter } from '../../src/jobs/activity.js';
import { delegationIdsOf } from '../../src/jobs/job-service.js';
import type { BulkItem } from '../../src/jobs/job-actions.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore, type NewJob } from '../../src/store/job-store.js';
import type { JobChanges } from '../../src/store/job-record.js';
import { emptyJobDescription, type JobDescription } from '../../src/vocabulary/job-description.js';
import { INTERNAL_STATES, LRMS_SUB_STATES, OUTCOMES, REST_STATES } from '../../src/vocabulary/job-states.js';
import { nastyText } from '../helpers/nasty-text.js';
import { legacyActivityDocument, legacyComputingActivity, type LegacyActivityOptions } from './legacy-activity.js';
import { newJobRow } from '../helpers/new-job.js';

const text = nastyText('  \t', 'line one\nline two\r\n\nthree', '/DC=org/DC=example/CN=Test User', 'x'.repeat(1500));
const texts = fc.array(text, { maxLength: 4 });
const count = fc.oneof(
  fc.integer({ min: -5, max: 1e9 }),
  fc.double({ noNaN: false }),
  fc.constantFrom(0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY),
);
const time = fc.oneof(
  fc.date({ noInvalidDate: false }),
  fc.integer({ min: 0, max: 4_102_444_800 }),
  fc.double({ min: -1e12, max: 1e12, noNaN: false }),
  fc.constantFrom(0, 1_700_000_000.75, 253_402_300_800, Number.NaN, Number.NEGATIVE_INFINITY),
  // Neighbours in the time cache (same slot, 256 s apart), so hits and evictions both happen.
  fc.integer({ min: 0, max: 40 }).map((k) => 1_800_000_000 + k * 256),
);
const internal = fc.constantFrom(...INTERNAL_STATES);

const view: fc.Arbitrary<ActivityView> = fc.record(
  {
    id: fc.oneof(fc.constant('a1b2c3d4e5f6a1b2c3d4e5f6'), text),
    name: text,
    descriptionLanguage: fc.constantFrom('emies:adl', 'nordugrid:xrsl'),
    restState: fc.constantFrom(...REST_STATES),
    gmState: internal,
    pending: fc.boolean(),
    lrmsState: fc.constantFrom('Q', 'R', 'S', 'E', 'O', 'EXECUTED'),
    failedState: internal,
    failureReasons: texts,
    exitCode: count,
    lrmsExitCode: count,
    waitingPosition: count,
    ownerDn: text,
    localOwner: text,
    fqans: texts,
    requestedWallTimeSeconds: count,
    requestedCpuTimeSeconds: count,
    requestedSlots: count,
    requestedRuntimeEnvironments: texts,
    stdin: text,
    stdout: text,
    stderr: text,
    logDir: text,
    executionNodes: texts,
    queue: text,
    localId: text,
    usedWallTimeSeconds: count,
    usedCpuTimeSeconds: count,
    usedMemoryKb: count,
    reportedByJob: texts,
    submissionTime: time,
    lrmsSubmissionTime: time,
    startTime: time,
    lrmsEndTime: time,
    endTime: time,
    workingAreaEraseTime: time,
    proxyExpirationTime: time,
    submissionHost: text,
    submissionClientName: text,
    delegationIds: fc.array(fc.constantFrom('d1', 'd2'), { maxLength: 2 }),
    otherMessages: texts,
  },
  { requiredKeys: ['id', 'restState', 'gmState'] },
);
const context: fc.Arbitrary<ActivityContext> = fc.record(
  {
    hostname: fc.oneof(fc.constantFrom('ce.example.org', 'vm'), text),
    now: time,
    validitySeconds: count,
  },
  { requiredKeys: ['hostname', 'now'] },
);

/** The bulk item as the general renderer built it before (render.ts bulkItemElement with the old tree). */
function legacyItem(it: { status: number; reason: string; id?: string; doc?: XmlElement | null }): XmlElement {
  return el('job', [
    el('status-code', String(it.status)),
    el('reason', it.reason),
    it.id !== undefined && el('id', it.id),
    it.doc !== undefined && el('info_document', it.doc ?? undefined),
  ]);
}

describe('the ComputingActivity template', () => {
  it('writes what the element builder rendered, for random views (JSON, XML, tree)', () => {
    fc.assert(
      fc.property(view, context, (v, ctx) => {
        const before = legacyComputingActivity(v, ctx);
        const now = computingActivity(v, ctx);
        assert.equal(now.json(), renderJsonMember(before));
        assert.equal(now.xml(), renderXml(before));
        assert.deepEqual(now.element(), before);
        assert.equal(now.name, before.name);
      }),
      { numRuns: 3_000, seed: 20261126 },
    );
  });

  it('inside bulk info answers: the same bytes in every format, whole and streamed', () => {
    const entry = fc.record({
      view: view,
      status: fc.constantFrom(200, 404, 400),
      reason: fc.oneof(fc.constantFrom('OK', 'Job not found'), text),
      withId: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 5 }),
        context,
        fc.constantFrom('json', 'xml', 'html'),
        (entries, ctx, format) => {
          const items: BulkItem[] = [];
          const legacy: XmlElement[] = [];
          for (const e of entries) {
            const ok = e.status === 200;
            const base = { status: e.status, reason: e.reason };
            // An entry that is not an id has no id (index.ts answers it without one).
            const id = ok || e.withId ? e.view.id : undefined;
            items.push({
              ...base,
              ...(id === undefined ? {} : { id }),
              infoDocument: ok ? computingActivity(e.view, ctx) : null,
            } as BulkItem);
            legacy.push(legacyItem({ ...base, id, doc: ok ? legacyComputingActivity(e.view, ctx) : null }));
          }
          const expected = renderDoc(el('jobs', legacy), format, JOBS_FORCED_ARRAYS);
          assert.equal(renderBulk(items, format), expected);
          assert.equal([...bulkPieces(items, format)].join(''), expected);
        },
      ),
      { numRuns: 1_000, seed: 20261126 },
    );
  });
});

describe('activity documents of stored jobs', () => {
  let root = '';
  after(() => rm(root, { recursive: true, force: true }));

  const description = (over: Partial<JobDescription>): JobDescription => ({
    ...emptyJobDescription('xrsl'),
    executable: '/bin/true',
    ...over,
  });

  it('are the same in JSON and XML for jobs in every state, read back from SQLite', async () => {
    root = await mkdtemp(join(tmpdir(), 'ceres-activity-'));
    const store = new JobStore(openDatabase(join(root, 'db')));
    const rnd = fc.sample(
      fc.record({
        name: fc.option(text, { nil: undefined }),
        count: fc.option(fc.integer({ min: 1, max: 64 }), { nil: undefined }),
        wall: fc.option(fc.integer({ min: 0, max: 1e6 }), { nil: undefined }),
        cpu: fc.option(fc.integer({ min: 0, max: 1e6 }), { nil: undefined }),
        rtes: fc.array(fc.constantFrom('ENV/PROXY', 'APPS/FOO-1.0', ' '), { maxLength: 2 }),
        io: fc.array(fc.option(text, { nil: undefined }), { minLength: 4, maxLength: 4 }),
        format: fc.constantFrom('xrsl', 'adl'),
        queue: fc.constantFrom('main', 'long', ''),
        localAccount: fc.option(fc.constantFrom('atlas001', 'ceres'), { nil: null }),
        fqans: fc.option(fc.array(fc.constantFrom('/atlas/Role=production', '/atlas'), { maxLength: 2 }), {
          nil: null,
        }),
        delegations: fc.array(fc.constantFrom('d1', 'd2'), { maxLength: 2 }),
        clientHost: fc.option(fc.constantFrom('127.0.0.1', '::1'), { nil: null }),
        state: internal,
        rest: fc.constantFrom(...REST_STATES),
        pending: fc.boolean(),
        lrms: fc.option(fc.constantFrom(...LRMS_SUB_STATES), { nil: null }),
        outcome: fc.option(fc.constantFrom(...OUTCOMES), { nil: null }),
        failedState: fc.option(internal, { nil: null }),
        failureReason: fc.option(text, { nil: null }),
        exitCode: fc.option(fc.integer({ min: -1, max: 255 }), { nil: null }),
        localId: fc.option(fc.constantFrom('4242', ''), { nil: null }),
        started: fc.option(fc.integer({ min: 1.7e12, max: 1.9e12 }), { nil: null }),
        ended: fc.option(fc.integer({ min: 1.7e12, max: 1.9e12 }), { nil: null }),
        erase: fc.option(fc.integer({ min: 1.7e12, max: 1.9e12 }), { nil: null }),
        usage: fc.option(
          fc.record(
            {
              wallTimeSeconds: fc.double({ min: 0, max: 1e6, noNaN: true }),
              cpuTimeSeconds: fc.double({ min: 0, max: 1e6, noNaN: true }),
              maxRssBytes: fc.integer({ min: 0, max: 2 ** 40 }),
              nodes: fc.array(fc.constantFrom('vm', 'node1', ''), { maxLength: 2 }),
              endTime: fc.integer({ min: 1.7e12, max: 1.9e12 }),
              jobReported: fc.subarray(['nodes', 'cpuTime', 'exitCode', 'maxRss', 'junk']),
            },
            { requiredKeys: [] },
          ),
          { nil: undefined },
        ),
      }),
      { numRuns: 400, seed: 20261126 },
    );
    // As the submission stores them (job-service.ts): the delegations a job uses are the
    // ones its description names, the main one and per-file ones.
    const jobs: NewJob[] = rnd.map((r, i) => {
      const [main, perFile] = r.delegations;
      const desc = description({
        ...(r.name === undefined ? {} : { jobName: r.name }),
        ...(r.count === undefined ? {} : { count: r.count }),
        ...(r.wall === undefined ? {} : { wallTimeSeconds: r.wall }),
        ...(r.cpu === undefined ? {} : { cpuTimeSeconds: r.cpu }),
        runtimeEnvironments: r.rtes.map((name) => ({ name }) as JobDescription['runtimeEnvironments'][number]),
        ...(r.io[0] === undefined ? {} : { stdin: r.io[0] }),
        ...(r.io[1] === undefined ? {} : { stdout: r.io[1] }),
        ...(r.io[2] === undefined ? {} : { stderr: r.io[2] }),
        ...(r.io[3] === undefined ? {} : { logDir: r.io[3] }),
        ...(main === undefined || i % 4 === 0 ? {} : { delegationId: main }),
        outputFiles:
          perFile === undefined && i % 4 !== 0
            ? []
            : [
                {
                  name: 'out',
                  target: 'https://se.example.org/out',
                  delegationId: perFile ?? main ?? 'd2',
                  options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false },
                },
              ],
      });
      return newJobRow(
        `job${String(i).padStart(4, '0')}${'abcdef'.repeat(3)}`,
        i % 3 ? '/DC=org/DC=test/CN=Alice' : '/DC=org/DC=test/CN=Bob & "Co" <x>',
        {
          queue: r.queue,
          delegationId: desc.delegationId ?? null,
          delegationIds: delegationIdsOf(desc),
          format: r.format,
          description: desc,
          createdAt: 1_795_700_000_000 + i * 777,
          clientHost: r.clientHost,
          localAccount: r.localAccount,
          fqans: r.fqans,
        },
      );
    });
    store.insertMany(jobs);
    rnd.forEach((r, i) => {
      const id = jobs[i]!.id;
      const changes: JobChanges = {
        state: r.state,
        restState: r.rest,
        pending: r.pending,
        lrmsState: r.lrms,
        outcome: r.outcome,
        failedState: r.failedState,
        failureReason: r.failureReason,
        exitCode: r.exitCode,
        localId: r.localId,
        startedAt: r.started,
        endedAt: r.ended,
        eraseAt: r.erase,
        ...(r.usage === undefined ? {} : { engine: { usage: r.usage } }),
      };
      assert.ok(store.update(store.get(id)!, changes), id);
    });
    const expiry = new Date('2036-11-18T22:07:46.5Z');
    const o: LegacyActivityOptions = {
      hostname: 'ce.example.org',
      delegationsOf: (id) => store.delegationsOf(id),
      proxyExpiry: (d) => (d === 'd1' ? expiry : undefined),
    };
    const now = new Date('2026-11-26T21:00:00.250Z');
    const write = activityWriter(o, now.getTime() / 1000);
    let withDelegations = 0;
    for (const { id } of jobs) {
      const j = store.get(id)!;
      if (store.delegationsOf(id).length > 0) withDelegations++;
      const before = legacyActivityDocument(j, o, now);
      for (const doc of [activityDocument(j, o, now.getTime() / 1000), write.write(j)]) {
        assert.equal(doc.json(), renderJsonMember(before), id);
        assert.equal(doc.xml(), renderXml(before), id);
        assert.deepEqual(doc.element(), before, id);
      }
    }
    assert.ok(withDelegations > 100 && withDelegations < 350, `${withDelegations} of 400 jobs with delegations`);
  });
});
