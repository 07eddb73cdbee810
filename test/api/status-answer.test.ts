import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { renderBulk } from '../../src/api/rest/jobs/render.js';
import { answerEach, InvalidIdEntry, type IdEntry } from '../../src/api/rest/jobs/id-list.js';
import { statusAnswer } from '../../src/api/rest/jobs/status-answer.js';
import { JobActions, type BulkItem } from '../../src/jobs/job-actions.js';
import type { JobStore } from '../../src/store/job-store.js';
import type { EnginePort } from '../../src/jobs/ports.js';

/** The general path: JobActions.status per id, answerEach, renderBulk. */
function general(entries: IdEntry[], states: Map<string, string>, format: 'json' | 'xml'): string {
  const store = { restStateOwned: (id: string) => states.get(id) } as unknown as JobStore;
  const actions = new JobActions(store, {} as EnginePort, () => {
    throw new Error('not used');
  });
  const items = answerEach<BulkItem | { status: number; reason: string }>(
    entries,
    (ids) => actions.status('owner', ids),
    (reason) => ({ status: 400, reason }),
  );
  return renderBulk(items, format);
}

test('status answer: found, unknown and invalid entries, in order, in both formats', () => {
  const states = new Map([
    ['a', 'RUNNING'],
    ['b<&>"', 'FINISHED'],
  ]);
  const entries: IdEntry[] = ['a', 'zz', new InvalidIdEntry('Job id is empty'), 'b<&>"', 'a'];
  const json = statusAnswer(entries, (id) => states.get(id), 'json').toString('utf8');
  assert.deepEqual(JSON.parse(json), {
    job: [
      { 'status-code': '200', reason: 'OK', id: 'a', state: 'RUNNING' },
      { 'status-code': '404', reason: 'Job not found', id: 'zz' },
      { 'status-code': '400', reason: 'Job id is empty' },
      { 'status-code': '200', reason: 'OK', id: 'b<&>"', state: 'FINISHED' },
      { 'status-code': '200', reason: 'OK', id: 'a', state: 'RUNNING' },
    ],
  });
  assert.equal(
    statusAnswer(entries.slice(1, 4), (id) => states.get(id), 'xml').toString('utf8'),
    '<jobs><job><status-code>404</status-code><reason>Job not found</reason><id>zz</id></job>' +
      '<job><status-code>400</status-code><reason>Job id is empty</reason></job>' +
      '<job><status-code>200</status-code><reason>OK</reason><id>b&lt;&amp;&gt;"</id><state>FINISHED</state></job></jobs>',
  );
  assert.equal(statusAnswer([], () => undefined, 'json').toString('utf8'), '{"job":[]}');
  assert.equal(statusAnswer([], () => undefined, 'xml').toString('utf8'), '<jobs/>');
});

test('status answer: byte for byte what the general bulk path gives, for random lists', () => {
  // Ids as clients might send them: any code points, markup and JSON specials included.
  const odd = fc.constantFrom('', 'a&b', '<x>', '"q"', '\r\n', '\u0001', '\uFFFE', '😀', '\\', '\u2028');
  const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), odd);
  const entry = fc.oneof(
    { weight: 4, arbitrary: text },
    { weight: 1, arbitrary: text.map((r) => new InvalidIdEntry(r)) },
  );
  fc.assert(
    fc.property(
      fc.array(entry, { maxLength: 8 }),
      fc.array(fc.tuple(text, text), { maxLength: 6 }),
      fc.constantFrom('json' as const, 'xml' as const),
      (entries, known, format) => {
        // Some listed ids are known (with random states, odd ones included), some not.
        const states = new Map(known);
        for (const e of entries) if (typeof e === 'string' && e.length % 2 === 0) states.set(e, 'RUNNING');
        const bytes = statusAnswer(entries, (id) => states.get(id), format);
        const expected = Buffer.from(general(entries, states, format), 'utf8');
        assert.ok(bytes.equals(expected), `${bytes.toString('utf8')} != ${expected.toString('utf8')}`);
      },
    ),
    { numRuns: 500 },
  );
});

test('status answer: long and odd ids, ASCII and UTF-8 answers alike, match the general path', () => {
  // Ids far longer than a job id, with and without characters to escape or to encode.
  const long = fc.oneof(
    fc.string({ unit: 'binary', minLength: 100, maxLength: 400 }),
    fc.string({ unit: fc.constantFrom('a', '9', '"', '\\', '&', '<', 'é', '😀'), minLength: 100, maxLength: 400 }),
  );
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          long,
          long.map((r) => new InvalidIdEntry(r)),
        ),
        { minLength: 1, maxLength: 40 },
      ),
      fc.constantFrom('json' as const, 'xml' as const),
      (entries, format) => {
        const states = new Map<string, string>();
        for (const e of entries) if (typeof e === 'string' && e.length % 2 === 0) states.set(e, 'FINISHED');
        const bytes = statusAnswer(entries, (id) => states.get(id), format);
        assert.ok(bytes.equals(Buffer.from(general(entries, states, format), 'utf8')));
      },
    ),
    { numRuns: 200 },
  );
});
