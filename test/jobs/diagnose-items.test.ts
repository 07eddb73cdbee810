// The diagnose items rendered from the job record: `failed` of an ended job comes from
// the record, so it is there the moment the job is seen FAILED (the control file is
// written just after the end is stored).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnoseItemRenderer } from '../../src/jobs/diagnose-items.js';
import type { JobRecord } from '../../src/store/job-record.js';

const render = diagnoseItemRenderer({
  rawDescription: () => undefined,
  serviceUrl: () => 'https://ce.example.org:443/arex',
  activity: {} as never,
});
const job = (over: Partial<JobRecord>): JobRecord =>
  ({ id: 'j1', state: 'FINISHED', failureReason: null, ...over }) as JobRecord;

it("an ended job's failure reason is its `failed` item, as the engine writes the file", () => {
  assert.equal(
    render(job({ failureReason: 'Job finished with exit code 3' }), 'failed'),
    'Job finished with exit code 3\n',
  );
});

it('no failure, a job not yet ended, or a wiped one (its file kept with the minimal record): read from the control directory', () => {
  assert.equal(render(job({}), 'failed'), undefined, 'ended without failure');
  assert.equal(render(job({ state: 'FINISHING', failureReason: 'x' }), 'failed'), undefined, 'not ended yet');
  assert.equal(render(job({ state: 'DELETED', failureReason: 'x' }), 'failed'), undefined, 'wiped');
  assert.equal(render(job({ failureReason: 'x' }), 'errors'), undefined, 'other items');
});
