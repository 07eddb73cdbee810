// The diagnose items rendered from the job record: `failed` of an ended job comes from
// the record, so it is there the moment the job is seen FAILED (the control file is
// written just after the end is stored); the staging items (`input`, `output`,
// `input_status`, `statistics`) have A-REX's content and lifetime. Their way through the
// real service: test/e2e/diagnose-items.test.ts.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { diagnoseItemRenderer } from '../../src/jobs/diagnose-items.js';
import type { JobRecord } from '../../src/store/job-record.js';

const files = new Map<string, string>();
const render = diagnoseItemRenderer({
  rawDescription: () => undefined,
  serviceUrl: () => 'https://ce.example.org:443/arex',
  activity: {} as never,
  controlFile: (id, name) => Promise.resolve(files.get(`${id}/${name}`)),
});
/** Runs `fn` with these control files present, then removes them. */
async function withFiles(entries: Record<string, string>, fn: () => Promise<void>): Promise<void> {
  for (const [k, v] of Object.entries(entries)) files.set(k, v);
  try {
    await fn();
  } finally {
    files.clear();
  }
}
const job = (over: Partial<JobRecord>): JobRecord =>
  ({
    id: 'j1',
    state: 'FINISHED',
    failureReason: null,
    failedState: null,
    description: { inputFiles: [], outputFiles: [] },
    ...over,
  }) as JobRecord;

it("an ended job's failure reason is its `failed` item, as the engine writes the file", async () => {
  assert.equal(
    await render(job({ failureReason: 'Job finished with exit code 3' }), 'failed'),
    'Job finished with exit code 3\n',
  );
});

it('no failure, a job not yet ended, or a wiped one (its file kept with the minimal record): read from the control directory', async () => {
  assert.equal(await render(job({}), 'failed'), undefined, 'ended without failure');
  assert.equal(await render(job({ state: 'FINISHING', failureReason: 'x' }), 'failed'), undefined, 'not ended yet');
  assert.equal(await render(job({ state: 'DELETED', failureReason: 'x' }), 'failed'), undefined, 'wiped');
  assert.equal(await render(job({ failureReason: 'x' }), 'errors'), undefined, 'other items');
});

const staged = (over: Partial<JobRecord>): JobRecord =>
  job({
    id: 's1',
    description: {
      inputFiles: [
        { name: 'up.txt', executable: false },
        { name: 'sized in', size: 12, checksum: 'adler32:0a0b', executable: false },
        { name: '/data/a.dat', source: 'https://u:secret@se.example.org/a.dat?token=abc', executable: false },
      ],
      outputFiles: [
        { name: 'out.txt', options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false } },
        {
          name: 'res dir/r.txt',
          target: 'https://se.example.org/r.txt?sig=xyz',
          options: { useIfSuccess: true, useIfFailure: false, useIfCancel: false },
        },
      ],
    } as unknown as JobRecord['description'],
    ...over,
  });

it('`input` while staging in: every input not yet delivered, A-REX line format, URLs redacted', async () => {
  await withFiles({ 's1/input_status': '/up.txt\n' }, async () =>
    assert.equal(
      await render(staged({ state: 'PREPARING' }), 'input'),
      '/sized\\ in 12.adler32:0a0b\n/data/a.dat https://u:***@se.example.org/a.dat?token=***\n',
    ),
  );
});

it('`input` once stage-in finished is empty, whatever the job did next', async () => {
  for (const state of ['SUBMIT', 'INLRMS', 'FINISHING', 'FINISHED'] as const)
    assert.equal(await render(staged({ state }), 'input'), '', state);
  assert.equal(
    await render(staged({ state: 'FINISHED', failedState: 'INLRMS' }), 'input'),
    '',
    'failed after stage-in',
  );
});

it('`input` of a job whose stage-in failed keeps what did not arrive: downloads `statistics` does not record', async () => {
  const failed = staged({ state: 'FINISHED', failedState: 'PREPARING', failureReason: 'User file: up.txt' });
  const downloaded = 'inputfile:url=https://u:***@se.example.org/a.dat?token=***,size=3,starttime=x,endtime=y\n';
  await withFiles({ 's1/statistics': downloaded }, async () =>
    assert.equal(await render(failed, 'input'), '/up.txt\n/sized\\ in 12.adler32:0a0b\n'),
  );
  assert.match((await render(failed, 'input')) ?? '', /\/data\/a\.dat https:/, 'the download never happened');
});

it('`output`: one line per declared output, its target redacted, nothing after a kept file', async () => {
  assert.equal(
    await render(staged({ state: 'ACCEPTED' }), 'output'),
    '/out.txt\n/res\\ dir/r.txt https://se.example.org/r.txt?sig=***\n',
  );
  assert.equal(await render(job({}), 'output'), '', 'no declared output: empty, not absent');
});

it('`input_status` starts with the empty line A-REX writes at creation, uploads after it', async () => {
  assert.equal(await render(job({ state: 'ACCEPTED' }), 'input_status'), '\n');
  await withFiles({ 'j1/input_status': '/a\n/b/c\n' }, async () =>
    assert.equal(await render(job({}), 'input_status'), '\n/a\n/b/c\n'),
  );
});

it('`statistics` is empty from PREPARING on even without transfers; an accepted job reads the file (absent: 404)', async () => {
  assert.equal(await render(job({ state: 'PREPARING' }), 'statistics'), '');
  assert.equal(await render(job({ state: 'ACCEPTED' }), 'statistics'), undefined);
  const line = 'outputfile:url=u,size=1,starttime=a,endtime=b\n';
  await withFiles({ 'j1/statistics': line }, async () => assert.equal(await render(job({}), 'statistics'), line));
});

it('a wiped job: the staging items are read from what its minimal record kept (A-REX removes them)', async () => {
  for (const name of ['input', 'output', 'input_status', 'statistics'] as const)
    assert.equal(await render(staged({ state: 'DELETED' }), name), undefined, name);
});

it('`output_status`, `comment`, `acl`: never rendered (the control file, absent until written)', async () => {
  for (const name of ['output_status', 'comment', 'acl', 'errors', 'diag'] as const)
    assert.equal(await render(staged({ state: 'FINISHED' }), name), undefined, name);
});
