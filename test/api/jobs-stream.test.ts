// Streamed job answers (GET jobs, action=info) are byte for byte what the document
// model renders for the same content, in every format, and consume their items lazily.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { el } from '../../src/doc/element.js';
import { writtenDoc, type WrittenDoc } from '../../src/doc/written-doc.js';
import {
  bulkDocument,
  bulkPieces,
  JOBS_FORCED_ARRAYS,
  listDocument,
  listPieces,
} from '../../src/api/rest/jobs/render.js';
import { renderDoc } from '../../src/http/send.js';

const FORMATS = ['json', 'xml', 'html'] as const;
const doc = (id: string): WrittenDoc =>
  writtenDoc(
    el(
      'ComputingActivity',
      [
        el('ID', `urn:${id}`),
        el('State', 'arcrest:ACCEPTING'),
        el('State', 'emies:accepted'),
        el('Other', 'a&b<c> "ü"'),
      ],
      { xmlns: 'http://schemas.ogf.org/glue/2009/03/spec_2.0_r1' },
    ),
  );

describe('streamed job answers', () => {
  const infoCases = [
    [],
    [{ status: 200, reason: 'OK', id: 'j1', infoDocument: doc('j1') }],
    [
      { status: 200, reason: 'OK', id: 'j1', infoDocument: doc('j1') },
      { status: 404, reason: 'Job not found', id: 'z<z>', infoDocument: null },
      { status: 200, reason: 'OK', id: 'j2', infoDocument: doc('j2') },
    ],
  ];
  for (const format of FORMATS) {
    it(`action=info in ${format}: documents, 404 items and no items`, () => {
      for (const items of infoCases)
        assert.equal(
          [...bulkPieces(items, format)].join(''),
          renderDoc(bulkDocument(items), format, JOBS_FORCED_ARRAYS),
          `${items.length} items`,
        );
    });

    it(`GET jobs in ${format}: none, one, many`, () => {
      for (const n of [0, 1, 3, 500]) {
        const jobs = Array.from({ length: n }, (_, i) => ({ id: `id${i}&`, state: i % 2 ? 'FINISHED' : 'RUNNING' }));
        assert.equal(
          [...listPieces(jobs, format)].join(''),
          renderDoc(listDocument(jobs), format, JOBS_FORCED_ARRAYS),
          `${n} jobs`,
        );
      }
    });
  }

  it('items are taken one at a time, as the pieces are read', () => {
    let made = 0;
    function* items() {
      for (let i = 0; i < 1000; i++) {
        made++;
        yield { status: 200, reason: 'OK', id: `j${i}`, infoDocument: doc(`j${i}`) };
      }
    }
    const it = bulkPieces(items(), 'json');
    it.next();
    assert.equal(made, 1);
    it.next();
    assert.equal(made, 2);
  });
});
