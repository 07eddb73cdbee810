import { test } from 'node:test';
import assert from 'node:assert/strict';
import { el, firstChild, localName, textOf, type XmlElement } from '../../src/doc/element.js';
import { parseXml } from '../../src/doc/parse-xml.js';
import { renderJson } from '../../src/doc/render-json.js';
import { renderXml } from '../../src/doc/render-xml.js';
import type { ActivityView } from '../../src/info/activity-view.js';
import {
  buildComputingActivity,
  errorLines,
  MAX_ERROR_LINE_CHARS,
  MAX_ERROR_LINES,
  NO_DELEGATION_MESSAGE,
} from '../../src/info/computing-activity.js';
import { GLUE2_NS } from '../../src/info/glue2-constants.js';
import { finishedJob, HOST, JOB_ID, NOW, NOW_TEXT } from './fixtures.js';
import { childNames, orderViolations } from './glue2-order.js';
import { all, at, scalars, text, texts } from './tree.js';

const ctx = { hostname: HOST, now: NOW };
type Json = Record<string, unknown>;

/** The activity as a client receives it inside a bulk `info` answer. */
function asJson(job: ActivityView): Json {
  const answer = el('jobs', [
    el('job', [
      el('status-code', '200'),
      el('reason', 'OK'),
      el('id', job.id),
      el('info_document', [buildComputingActivity(job, ctx)]),
    ]),
  ]);
  const parsed = JSON.parse(renderJson(answer, ['job'])) as {
    job: Array<{ info_document: { ComputingActivity: Json } }>;
  };
  const ca = parsed.job[0]?.info_document.ComputingActivity;
  assert.ok(ca);
  return ca;
}

/** What the ARC client's arcstat does: the first State starting with `arcrest:` defines the state. */
function arcstatState(ca: XmlElement): string | undefined {
  for (const s of texts(ca, 'State')) if (s.startsWith('arcrest:')) return s.slice(8);
  return undefined;
}

/** What pyarcrest does with the JSON (State list, Error list-or-string, strptime times). */
function pyarcrestRead(ca: Json): { state?: string; errors: string[]; times: Record<string, Date> } {
  const states = Array.isArray(ca.State) ? (ca.State as string[]) : [ca.State as string];
  let state: string | undefined;
  for (const s of states) if (s.startsWith('arcrest:')) state = s.slice(8);
  const errors = ca.Error === undefined ? [] : Array.isArray(ca.Error) ? (ca.Error as string[]) : [ca.Error as string];
  const times: Record<string, Date> = {};
  for (const k of ['SubmissionTime', 'EndTime', 'WorkingAreaEraseTime', 'ProxyExpirationTime']) {
    const v = ca[k];
    if (v === undefined) continue;
    assert.equal(typeof v, 'string');
    const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(v as string);
    assert.ok(m, `${k} not in %Y-%m-%dT%H:%M:%SZ: ${v as string}`);
    times[k] = new Date(v as string);
  }
  return state === undefined ? { errors, times } : { state, errors, times };
}

test('root: ComputingActivity in the GLUE2 namespace with BaseType, CreationTime, Validity (in that order)', () => {
  const ca = buildComputingActivity(finishedJob(), ctx);
  assert.equal(ca.name, 'ComputingActivity');
  assert.deepEqual(Object.entries(ca.attrs ?? {}), [
    ['xmlns', GLUE2_NS],
    ['BaseType', 'Activity'],
    ['CreationTime', NOW_TEXT],
    ['Validity', '60'],
  ]);
  assert.equal(buildComputingActivity(finishedJob(), { ...ctx, validitySeconds: 600 }).attrs?.Validity, '600');
  // The namespace is real: a parser resolves it on every child.
  const parsed = parseXml(renderXml(ca));
  assert.equal(parsed.ns, GLUE2_NS);
  assert.equal(firstChild(parsed, 'State')?.ns, GLUE2_NS);
});

test('a fully known job: children in A-REX order, identifiers in A-REX form', () => {
  const ca = buildComputingActivity(
    finishedJob({
      failedState: 'INLRMS',
      restState: 'FAILED',
      failureReasons: ['x'],
      waitingPosition: 0,
      lrmsExitCode: 1,
      requestedRuntimeEnvironments: ['APPS/FOO-1.0'],
      stdin: 'in.txt',
      lrmsSubmissionTime: 1,
      submissionClientName: 'arc/6.17',
      otherMessages: ['hello'],
    }),
    ctx,
  );
  assert.deepEqual(orderViolations(ca), []);
  assert.deepEqual(childNames(ca), [
    'ID',
    'Name',
    'OtherInfo',
    'Type',
    'IDFromEndpoint',
    'LocalIDFromManager',
    'JobDescription',
    'State',
    'State',
    'State',
    'RestartState',
    'RestartState',
    'RestartState',
    'ExitCode',
    'ComputingManagerExitCode',
    'Error',
    'WaitingPosition',
    'Owner',
    'LocalOwner',
    'RequestedTotalWallTime',
    'RequestedTotalCPUTime',
    'RequestedSlots',
    'RequestedApplicationEnvironment',
    'StdIn',
    'StdOut',
    'StdErr',
    'LogDir',
    'ExecutionNode',
    'Queue',
    'UsedTotalWallTime',
    'UsedTotalCPUTime',
    'UsedMainMemory',
    'SubmissionTime',
    'ComputingManagerSubmissionTime',
    'StartTime',
    'ComputingManagerEndTime',
    'EndTime',
    'WorkingAreaEraseTime',
    'ProxyExpirationTime',
    'SubmissionHost',
    'SubmissionClientName',
    'OtherMessages',
    'Associations',
  ]);
  assert.equal(text(ca, 'ID'), `urn:caid:${HOST}:org.nordugrid.arcrest:${JOB_ID}`);
  assert.equal(text(ca, 'IDFromEndpoint'), `urn:idfe:${JOB_ID}`);
  assert.equal(text(ca, 'OtherInfo'), 'SubmittedVia=org.nordugrid.arcrest');
  assert.equal(text(ca, 'Type'), 'single');
  assert.equal(text(ca, 'JobDescription'), 'nordugrid:xrsl');
  assert.equal(text(ca, 'Associations/ComputingShareID'), `urn:ogf:ComputingShare:${HOST}:main`);
  assert.equal(text(ca, 'UsedMainMemory'), '3'); // 2049 kB rounds up to 3 MB
});

test('FINISHED: the fields arcstat shows, and State renders as a JSON array of three', () => {
  const ca = buildComputingActivity(finishedJob(), ctx);
  assert.equal(arcstatState(ca), 'FINISHED');
  assert.equal(text(ca, 'ExitCode'), '0');
  assert.equal(text(ca, 'StdOut'), 'out.txt');
  assert.equal(text(ca, 'StdErr'), 'err.txt');
  assert.equal(text(ca, 'LogDir'), 'gmlog');
  assert.equal(all(ca, 'RestartState').length, 0);
  assert.equal(all(ca, 'Error').length, 0);
  const json = asJson(finishedJob());
  assert.deepEqual(json.State, ['nordugrid:FINISHED', 'file:finished', 'arcrest:FINISHED']);
  assert.equal(json.ExitCode, '0');
  assert.equal(json.Error, undefined);
  const py = pyarcrestRead(json);
  assert.equal(py.state, 'FINISHED');
  assert.deepEqual(py.times, {
    SubmissionTime: new Date('2026-11-21T22:19:16Z'),
    EndTime: new Date('2026-11-21T22:19:22Z'),
    WorkingAreaEraseTime: new Date('2026-11-28T22:19:22Z'),
    ProxyExpirationTime: new Date('2036-11-18T22:07:46Z'),
  });
  assert.deepEqual(json._attributes, { BaseType: 'Activity', CreationTime: NOW_TEXT, Validity: '60' });
});

test('FAILED with two failure lines: Error is a JSON array, RestartState names the failed state', () => {
  const job = finishedJob({
    restState: 'FAILED',
    failedState: 'INLRMS',
    exitCode: 3,
    failureReasons: ['LRMS error: (3) Job finished with wrong exit code - 3 != 0\nData upload failed'],
  });
  const ca = buildComputingActivity(job, ctx);
  assert.equal(arcstatState(ca), 'FAILED');
  assert.deepEqual(texts(ca, 'State'), ['nordugrid:FAILED::INLRMS', 'file:inlrms', 'arcrest:FAILED']);
  assert.deepEqual(texts(ca, 'RestartState'), ['nordugrid:INLRMS', 'file:inlrms', 'arcrest:OTHER']);
  const json = asJson(job);
  assert.deepEqual(json.Error, ['LRMS error: (3) Job finished with wrong exit code - 3 != 0', 'Data upload failed']);
  assert.deepEqual(json.RestartState, ['nordugrid:INLRMS', 'file:inlrms', 'arcrest:OTHER']);
  assert.equal(json.ExitCode, '3');
  assert.deepEqual(pyarcrestRead(json).errors, [
    'LRMS error: (3) Job finished with wrong exit code - 3 != 0',
    'Data upload failed',
  ]);
});

test('KILLED with one failure line: Error is a plain JSON string', () => {
  const job = finishedJob({
    restState: 'KILLED',
    failedState: 'INLRMS',
    exitCode: undefined,
    failureReasons: ['Job is canceled by external request'],
  });
  const ca = buildComputingActivity(job, ctx);
  assert.equal(arcstatState(ca), 'KILLED');
  assert.equal(all(ca, 'ExitCode').length, 0);
  const json = asJson(job);
  assert.equal(json.Error, 'Job is canceled by external request');
  assert.deepEqual(pyarcrestRead(json).errors, ['Job is canceled by external request']);
  assert.equal((json.State as string[])[1], 'file:killed');
});

test('RUNNING: live state, no end-of-job fields', () => {
  const job: ActivityView = {
    id: JOB_ID,
    restState: 'RUNNING',
    gmState: 'INLRMS',
    lrmsState: 'R',
    queue: 'main',
    localId: '777',
    ownerDn: '/DC=org/DC=example/CN=Test User',
    executionNodes: ['node1', 'node2'],
    submissionTime: new Date('2026-11-21T22:00:00Z'),
    startTime: new Date('2026-11-21T22:00:05Z'),
  };
  const ca = buildComputingActivity(job, ctx);
  assert.equal(arcstatState(ca), 'RUNNING');
  assert.deepEqual(texts(ca, 'State'), ['nordugrid:INLRMS:R', 'file:inlrms', 'arcrest:RUNNING']);
  for (const absent of [
    'ExitCode',
    'EndTime',
    'ComputingManagerEndTime',
    'RestartState',
    'Error',
    'WorkingAreaEraseTime',
  ]) {
    assert.equal(all(ca, absent).length, 0, absent);
  }
  const json = asJson(job);
  assert.deepEqual(json.ExecutionNode, ['node1', 'node2']);
  assert.equal(json.LocalIDFromManager, '777');
});

test('every REST state reaches the clients as the arcrest: State', () => {
  const states = [
    'ACCEPTING',
    'ACCEPTED',
    'PREPARING',
    'PREPARED',
    'SUBMITTING',
    'QUEUING',
    'RUNNING',
    'HELD',
    'EXITINGLRMS',
    'OTHER',
    'EXECUTED',
    'FINISHING',
    'FINISHED',
    'FAILED',
    'KILLING',
    'KILLED',
    'WIPED',
  ] as const;
  for (const s of states) {
    const job: ActivityView = { id: JOB_ID, restState: s, gmState: 'INLRMS' };
    assert.equal(arcstatState(buildComputingActivity(job, ctx)), s);
    const json = asJson(job);
    assert.ok(Array.isArray(json.State) && json.State.length === 3, s);
    assert.equal(pyarcrestRead(json).state, s);
  }
});

test('minimal view: nothing is invented for unknown fields', () => {
  const ca = buildComputingActivity({ id: JOB_ID, restState: 'ACCEPTING', gmState: 'ACCEPTED' }, ctx);
  assert.deepEqual(childNames(ca), ['ID', 'OtherInfo', 'Type', 'IDFromEndpoint', 'State', 'State', 'State']);
  const json = asJson({ id: JOB_ID, restState: 'ACCEPTING', gmState: 'ACCEPTED' });
  assert.deepEqual(Object.keys(json), ['ID', 'OtherInfo', 'Type', 'IDFromEndpoint', 'State', '_attributes']);
});

test('empty strings, negative counts and invalid dates are treated as unknown', () => {
  const ca = buildComputingActivity(
    finishedJob({
      name: '',
      stdout: '  ',
      queue: '',
      ownerDn: '',
      requestedSlots: -1,
      usedWallTimeSeconds: Number.NaN,
      usedMemoryKb: -4,
      endTime: new Date('garbage'),
      submissionTime: Number.POSITIVE_INFINITY,
      executionNodes: ['', 'vm'],
    }),
    ctx,
  );
  for (const absent of [
    'Name',
    'StdOut',
    'Queue',
    'Owner',
    'RequestedSlots',
    'UsedTotalWallTime',
    'UsedMainMemory',
    'EndTime',
    'SubmissionTime',
    'Associations',
  ]) {
    assert.equal(all(ca, absent).length, 0, absent);
  }
  assert.deepEqual(texts(ca, 'ExecutionNode'), ['vm']);
  assert.deepEqual(orderViolations(ca), []);
});

test('a negative exit code is published (LRMS errors use -1)', () => {
  const ca = buildComputingActivity(finishedJob({ exitCode: -1 }), ctx);
  assert.equal(text(ca, 'ExitCode'), '-1');
});

test('times are YYYY-MM-DDThh:mm:ssZ UTC whether given as Date or epoch seconds', () => {
  const ca = buildComputingActivity(
    finishedJob({
      submissionTime: 1_700_000_000.75,
      startTime: new Date('2026-11-21T23:59:59.999+01:00'),
      proxyExpirationTime: 0,
    }),
    ctx,
  );
  assert.equal(text(ca, 'SubmissionTime'), '2023-11-14T22:13:20Z');
  assert.equal(text(ca, 'StartTime'), '2026-11-21T22:59:59Z');
  assert.equal(text(ca, 'ProxyExpirationTime'), '1970-01-01T00:00:00Z');
  for (const name of [
    'SubmissionTime',
    'StartTime',
    'ComputingManagerEndTime',
    'EndTime',
    'WorkingAreaEraseTime',
    'ProxyExpirationTime',
  ]) {
    assert.match(text(ca, name), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/, name);
  }
});

test('UTF-8 names and reasons survive XML and JSON rendering', () => {
  const name = 'Jöb «naïve» 東京 🚀';
  const reason = 'Fehler: Datei „ü.txt“ fehlt';
  const job = finishedJob({ name, restState: 'FAILED', failedState: 'PREPARING', failureReasons: [reason] });
  const xml = renderXml(buildComputingActivity(job, ctx));
  const back = parseXml(Buffer.from(xml, 'utf8'));
  assert.equal(text(back, 'Name'), name);
  assert.equal(text(back, 'Error'), reason);
  const json = asJson(job);
  assert.equal(json.Name, name);
  assert.equal(json.Error, reason);
});

test('markup in free text is escaped, not interpreted', () => {
  const job = finishedJob({
    name: '<b>&x</b>',
    restState: 'FAILED',
    failedState: 'SUBMIT',
    failureReasons: ['a < b && c > "d"'],
  });
  const back = parseXml(renderXml(buildComputingActivity(job, ctx)));
  assert.equal(text(back, 'Name'), '<b>&x</b>');
  assert.equal(text(back, 'Error'), 'a < b && c > "d"');
  assert.equal(all(back, 'b').length, 0);
});

test('every JSON scalar is a string (ARC 7 rendering rule)', () => {
  const json = asJson(finishedJob({ restState: 'FAILED', failedState: 'INLRMS', failureReasons: ['a', 'b'] }));
  for (const [path, v] of scalars(json)) assert.equal(typeof v, 'string', path);
});

test('no delegation: an OtherMessages note says data staging runs without credentials', () => {
  const none = buildComputingActivity(finishedJob({ delegationIds: [] }), ctx);
  assert.deepEqual(texts(none, 'OtherMessages'), [NO_DELEGATION_MESSAGE]);
  const some = buildComputingActivity(finishedJob({ delegationIds: ['abc'] }), ctx);
  assert.equal(all(some, 'OtherMessages').length, 0);
  const unknown = buildComputingActivity(finishedJob({ delegationIds: undefined }), ctx);
  assert.equal(all(unknown, 'OtherMessages').length, 0);
  const both = buildComputingActivity(finishedJob({ delegationIds: [], otherMessages: ['queued behind 3 jobs'] }), ctx);
  assert.deepEqual(texts(both, 'OtherMessages'), ['queued behind 3 jobs', NO_DELEGATION_MESSAGE]);
  assert.deepEqual(asJson(finishedJob({ delegationIds: [], otherMessages: ['x'] })).OtherMessages, [
    'x',
    NO_DELEGATION_MESSAGE,
  ]);
});

test('Error lines: one per line of every reason, blank lines dropped, CRLF handled', () => {
  assert.deepEqual(errorLines(['first\r\nsecond\n\n   \nthird  ', '', 'fourth']), [
    'first',
    'second',
    'third',
    'fourth',
  ]);
  assert.deepEqual(errorLines(undefined), []);
  assert.deepEqual(errorLines([]), []);
});

test('Error lines are bounded in count and length', () => {
  const many = Array.from({ length: MAX_ERROR_LINES + 10 }, (_, i) => `line ${i}`);
  const lines = errorLines([many.join('\n')]);
  assert.equal(lines.length, MAX_ERROR_LINES);
  assert.equal(lines[0], 'line 0');
  const long = errorLines(['x'.repeat(MAX_ERROR_LINE_CHARS * 3)]);
  assert.equal(long[0]?.length, MAX_ERROR_LINE_CHARS);
  const ca = buildComputingActivity(finishedJob({ restState: 'FAILED', failureReasons: many }), ctx);
  assert.equal(all(ca, 'Error').length, MAX_ERROR_LINES);
});

test('truncating a long Error line never splits a character outside the BMP', () => {
  const line = 'x'.repeat(MAX_ERROR_LINE_CHARS - 1) + '🚀🚀';
  const [cut] = errorLines([line]);
  assert.equal(cut, 'x'.repeat(MAX_ERROR_LINE_CHARS - 1));
  assert.equal(Buffer.from(cut ?? '', 'utf8').toString('utf8'), cut);
  const [whole] = errorLines(['x'.repeat(MAX_ERROR_LINE_CHARS - 2) + '🚀🚀']);
  assert.equal(whole, 'x'.repeat(MAX_ERROR_LINE_CHARS - 2) + '🚀');
});

test('the activity parses back with the same element names and values', () => {
  const ca = buildComputingActivity(finishedJob(), ctx);
  const back = parseXml(renderXml(ca));
  assert.deepEqual(childNames(back), childNames(ca));
  for (const c of back.children) {
    if (typeof c === 'string') continue;
    const orig = ca.children.find((x) => typeof x !== 'string' && localName(x) === localName(c));
    assert.ok(orig && typeof orig !== 'string');
    if (localName(c) !== 'State' && localName(c) !== 'Associations') assert.equal(textOf(c), textOf(orig));
  }
  assert.equal(at(back, 'Associations').children.length, 1);
});

test('figures only the job reported: one OtherInfo names their elements, after the others; none when there are none', () => {
  const job = { ...finishedJob(), fqans: ['/atlas'], reportedByJob: ['ExitCode', 'UsedTotalCPUTime'] };
  const ca = buildComputingActivity(job, ctx);
  assert.deepEqual(texts(ca, 'OtherInfo'), [
    'SubmittedVia=org.nordugrid.arcrest',
    'VOMSFQAN=/atlas',
    'ReportedByJob=ExitCode,UsedTotalCPUTime',
  ]);
  // The values stay where clients read them; the note is an OtherInfo string like the others.
  assert.equal(text(ca, 'ExitCode'), '0');
  assert.deepEqual(asJson(job).OtherInfo, [
    'SubmittedVia=org.nordugrid.arcrest',
    'VOMSFQAN=/atlas',
    'ReportedByJob=ExitCode,UsedTotalCPUTime',
  ]);
  const noFqans = buildComputingActivity({ ...finishedJob(), reportedByJob: ['UsedMainMemory'] }, ctx);
  assert.deepEqual(texts(noFqans, 'OtherInfo'), ['SubmittedVia=org.nordugrid.arcrest', 'ReportedByJob=UsedMainMemory']);
  for (const none of [undefined, []])
    assert.deepEqual(texts(buildComputingActivity({ ...finishedJob(), reportedByJob: none }, ctx), 'OtherInfo'), [
      'SubmittedVia=org.nordugrid.arcrest',
    ]);
});
