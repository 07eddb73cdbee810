import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bulkDocument, JOBS_FORCED_ARRAYS, renderBulk } from '../../src/api/rest/jobs/render.js';
import { el } from '../../src/doc/element.js';
import { writtenDoc } from '../../src/doc/written-doc.js';
import { renderDoc } from '../../src/http/send.js';
import { nastyText } from '../helpers/nasty-text.js';
import type { BulkItem } from '../../src/jobs/job-actions.js';

const general = (items: Parameters<typeof bulkDocument>[0], format: 'json' | 'xml' | 'html') =>
  renderDoc(bulkDocument(items), format, JOBS_FORCED_ARRAYS);

test('bulk answers: the JSON and XML shapes clients parse', () => {
  const items: BulkItem[] = [
    { status: 200, reason: 'OK', id: 'a', state: 'RUNNING' },
    { status: 404, reason: 'Job not found', id: 'b' },
    { status: 200, reason: 'OK', id: 'c', delegationIds: ['d1'] },
    { status: 200, reason: 'OK', id: 'e', delegationIds: ['d1', 'd2'] },
  ];
  assert.deepEqual(JSON.parse(renderBulk(items, 'json')), {
    job: [
      { 'status-code': '200', reason: 'OK', id: 'a', state: 'RUNNING' },
      { 'status-code': '404', reason: 'Job not found', id: 'b' },
      { 'status-code': '200', reason: 'OK', id: 'c', delegation_id: 'd1' },
      { 'status-code': '200', reason: 'OK', id: 'e', delegation_id: ['d1', 'd2'] },
    ],
  });
  assert.equal(
    renderBulk(items.slice(0, 2), 'xml'),
    '<jobs><job><status-code>200</status-code><reason>OK</reason><id>a</id><state>RUNNING</state></job>' +
      '<job><status-code>404</status-code><reason>Job not found</reason><id>b</id></job></jobs>',
  );
  assert.equal(renderBulk([], 'json'), '{"job":[]}');
  assert.equal(renderBulk([], 'xml'), '<jobs/>');
});

test('bulk answers with info documents, and HTML, take the general renderer', () => {
  const info: BulkItem[] = [
    { status: 200, reason: 'OK', id: 'a', infoDocument: writtenDoc(el('ComputingActivity', [el('State', 'x')])) },
    { status: 404, reason: 'Job not found', id: 'b', infoDocument: null },
  ];
  for (const format of ['json', 'xml', 'html'] as const) assert.equal(renderBulk(info, format), general(info, format));
  assert.match(
    renderBulk(info, 'xml'),
    /<info_document><ComputingActivity><State>x<\/State><\/ComputingActivity><\/info_document>/,
  );
  assert.match(renderBulk([{ status: 200, reason: 'OK', id: 'a' }], 'html'), /<html|<table|<dl|<ul/i);
});

test('the direct bulk writer renders exactly as the document renderer, for random answers', () => {
  const text = nastyText();
  const item = fc.record(
    {
      status: fc.constantFrom(200, 201, 202, 404, 409, 503),
      reason: text,
      code: text,
      id: text,
      state: text,
      delegationIds: fc.array(text, { maxLength: 3 }),
    },
    { requiredKeys: ['status', 'reason'] },
  );
  fc.assert(
    fc.property(fc.array(item, { maxLength: 5 }), fc.constantFrom('json', 'xml'), (items, format) => {
      assert.equal(renderBulk(items, format), general(items, format));
    }),
    { numRuns: 3_000, seed: 20261122 },
  );
});
