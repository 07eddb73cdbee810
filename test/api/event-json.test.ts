// The stream's event JSON is written out directly (src/api/rest/jobs/event-stream.ts,
// eventJson): it must be exactly what JSON.stringify makes of the event's object, for
// every value a job's record may hold, hostile reasons included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventJson } from '../../src/api/rest/jobs/event-stream.js';
import type { JobEvent } from '../../src/store/job-events.js';

function reference(e: JobEvent): string {
  return JSON.stringify({
    id: e.jobId,
    state: e.state,
    previous_state: e.previousState,
    time: new Date(e.at).toISOString(),
    ...(e.exitCode !== undefined ? { exit_code: e.exitCode } : {}),
    ...(e.failureReason !== undefined ? { failure_reason: e.failureReason } : {}),
  });
}

const base = {
  seq: 1,
  owner: 'o',
  vo: null,
  jobId: 'abc123',
  state: 'RUNNING',
  previousState: 'QUEUING',
  at: 1_764_000_000_123,
};

test('the event JSON is what JSON.stringify makes of it, for every shape of event', () => {
  const reasons = [
    '',
    'plain',
    'quote " and \\ back',
    'line\nbreak\r\n',
    'tab\t',
    '\u2028\u2029 separators',
    '\u0000\u001f controls',
    'é ü 漢字 😀',
    '\ud800 lone surrogate',
    '</script>',
  ];
  const events: JobEvent[] = [
    { ...base },
    { ...base, previousState: null, state: 'ACCEPTING' },
    { ...base, state: 'FINISHED', exitCode: 0 },
    { ...base, state: 'FAILED', exitCode: -1 },
    { ...base, state: 'FAILED', exitCode: 2_147_483_647 },
    { ...base, state: 'KILLED', failureReason: 'cancelled' },
    ...reasons.map((r, i) => ({ ...base, state: 'FAILED', exitCode: i, failureReason: r, at: base.at + i * 1000 })),
    { ...base, jobId: 'weird"id\\\n', at: 0 },
    { ...base, at: 253_402_300_799_999 },
  ];
  for (const e of events) {
    assert.equal(eventJson(e), reference(e));
    assert.deepEqual(JSON.parse(eventJson(e)), JSON.parse(reference(e)));
  }
});

test('events of the same and of different times each get their own time', () => {
  const a = { ...base, at: 1000 };
  const b = { ...base, at: 2000 };
  assert.equal(eventJson(a), reference(a));
  assert.equal(eventJson(a), reference(a));
  assert.equal(eventJson(b), reference(b));
  assert.equal(eventJson(a), reference(a));
});
