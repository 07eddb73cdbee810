import { test } from 'node:test';
import assert from 'node:assert/strict';
import { restartStateValues, stateValues, type StateInput } from '../../src/info/activity-states.js';
import { INTERNAL_STATES } from '../../src/vocabulary/job-states.js';

// Expected forms are those a live A-REX published for the same situations (its
// transcripts), plus the documented rules for the states the transcripts lack.
const cases: Array<[string, StateInput, [string, string, string]]> = [
  [
    'finished',
    { restState: 'FINISHED', gmState: 'FINISHED' },
    ['nordugrid:FINISHED', 'file:finished', 'arcrest:FINISHED'],
  ],
  [
    'failed in INLRMS',
    { restState: 'FAILED', gmState: 'FINISHED', failedState: 'INLRMS' },
    ['nordugrid:FAILED::INLRMS', 'file:inlrms', 'arcrest:FAILED'],
  ],
  [
    'killed in INLRMS',
    { restState: 'KILLED', gmState: 'FINISHED', failedState: 'INLRMS' },
    ['nordugrid:KILLED::INLRMS', 'file:killed', 'arcrest:KILLED'],
  ],
  [
    'failed in PREPARING',
    { restState: 'FAILED', gmState: 'FINISHED', failedState: 'PREPARING' },
    ['nordugrid:FAILED::PREPARING', 'file:preparing', 'arcrest:FAILED'],
  ],
  [
    'failed without a failed state (not restartable)',
    { restState: 'FAILED', gmState: 'FINISHED' },
    ['nordugrid:FAILED', 'file:failed', 'arcrest:FAILED'],
  ],
  [
    'accepting',
    { restState: 'ACCEPTING', gmState: 'ACCEPTED' },
    ['nordugrid:ACCEPTED', 'file:accepted', 'arcrest:ACCEPTING'],
  ],
  [
    'accepted (held by a limit)',
    { restState: 'ACCEPTED', gmState: 'ACCEPTED', pending: true },
    ['nordugrid:PENDING:ACCEPTED', 'file:hold', 'arcrest:ACCEPTED'],
  ],
  [
    'preparing',
    { restState: 'PREPARING', gmState: 'PREPARING' },
    ['nordugrid:PREPARING', 'file:preparing', 'arcrest:PREPARING'],
  ],
  [
    'submitting',
    { restState: 'SUBMITTING', gmState: 'SUBMIT' },
    ['nordugrid:SUBMIT', 'file:submit', 'arcrest:SUBMITTING'],
  ],
  [
    'queuing',
    { restState: 'QUEUING', gmState: 'INLRMS', lrmsState: 'Q' },
    ['nordugrid:INLRMS:Q', 'file:inlrms', 'arcrest:QUEUING'],
  ],
  [
    'running',
    { restState: 'RUNNING', gmState: 'INLRMS', lrmsState: 'R' },
    ['nordugrid:INLRMS:R', 'file:inlrms', 'arcrest:RUNNING'],
  ],
  [
    'running, batch state unknown',
    { restState: 'RUNNING', gmState: 'INLRMS' },
    ['nordugrid:INLRMS', 'file:inlrms', 'arcrest:RUNNING'],
  ],
  [
    'other batch state',
    { restState: 'OTHER', gmState: 'INLRMS', lrmsState: 'O' },
    ['nordugrid:INLRMS:O', 'file:running', 'arcrest:OTHER'],
  ],
  [
    'executed (pending INLRMS)',
    { restState: 'EXECUTED', gmState: 'INLRMS', pending: true, lrmsState: 'R' },
    ['nordugrid:PENDING:INLRMS', 'file:hold', 'arcrest:EXECUTED'],
  ],
  [
    'finishing',
    { restState: 'FINISHING', gmState: 'FINISHING' },
    ['nordugrid:FINISHING', 'file:finishing', 'arcrest:FINISHING'],
  ],
  [
    'killing',
    { restState: 'KILLING', gmState: 'CANCELING' },
    ['nordugrid:CANCELING', 'file:canceling', 'arcrest:KILLING'],
  ],
];

for (const [name, input, expected] of cases) {
  test(`State forms: ${name}`, () => {
    assert.deepEqual(stateValues(input), expected);
  });
}

test('the arcrest form is always the REST state given, whatever the internal state says', () => {
  // The REST state is computed live by the job service; the builder must never second-guess it.
  assert.equal(
    stateValues({ restState: 'FINISHED', gmState: 'FINISHED', failedState: 'INLRMS' })[2],
    'arcrest:FINISHED',
  );
  assert.equal(
    stateValues({ restState: 'FINISHED', gmState: 'FINISHED', failedState: 'INLRMS' })[0],
    'nordugrid:FINISHED',
  );
});

test('RestartState of a job that failed in INLRMS matches A-REX (arcrest:OTHER)', () => {
  assert.deepEqual(restartStateValues('INLRMS'), ['nordugrid:INLRMS', 'file:inlrms', 'arcrest:OTHER']);
});

test('RestartState for staging failures names PREPARING / FINISHING (aCT restarts those)', () => {
  assert.deepEqual(restartStateValues('PREPARING'), ['nordugrid:PREPARING', 'file:preparing', 'arcrest:PREPARING']);
  assert.deepEqual(restartStateValues('FINISHING'), ['nordugrid:FINISHING', 'file:finishing', 'arcrest:FINISHING']);
});

test('RestartState is defined for every internal state, in the three prefixes', () => {
  for (const s of INTERNAL_STATES) {
    const [ng, file, rest] = restartStateValues(s);
    assert.equal(ng, `nordugrid:${s}`);
    assert.match(file, /^file:[a-z]+$/);
    assert.match(rest, /^arcrest:[A-Z]+$/);
  }
});
