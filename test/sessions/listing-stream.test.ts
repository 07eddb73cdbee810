// Streamed listings, PROPFIND and info answers: byte for byte what the document model's
// renderers give for the same content (the old whole-answer path, kept here as the
// oracle); the cap on listed entries; the pulled, stoppable text stream.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { el } from '../../src/doc/element.js';
import { renderJson } from '../../src/doc/render-json.js';
import { renderXml } from '../../src/doc/render-xml.js';
import { textStream } from '../../src/doc/text-stream.js';
import type { DirTable } from '../../src/sessions/dir-table.js';
import { isoSeconds, listingJson, listingXml } from '../../src/sessions/listing.js';
import { multistatus, type DavResource } from '../../src/sessions/propfind.js';
import { encodeSegment } from '../../src/sessions/href.js';
import { A, makeFixture, type Fixture } from './fixture.js';

interface Entry {
  name: string;
  kind: 'file' | 'dir';
  size: number;
  mtimeMs: number;
  createdMs: number;
}

function table(entries: Entry[]): DirTable {
  const sorted = [...entries.filter((e) => e.kind === 'file'), ...entries.filter((e) => e.kind === 'dir')];
  return {
    names: sorted.map((e) => e.name),
    fileCount: sorted.filter((e) => e.kind === 'file').length,
    sizes: Float64Array.from(sorted.map((e) => e.size)),
    mtimeMs: Float64Array.from(sorted.map((e) => e.mtimeMs)),
    createdMs: Float64Array.from(sorted.map((e) => e.createdMs)),
  };
}

// The oracle: listings and PROPFIND answers as element trees, rendered whole.
function oracleListingXml(es: Entry[]): string {
  const o = [...es.filter((e) => e.kind === 'file'), ...es.filter((e) => e.kind === 'dir')];
  return renderXml(
    el(
      'list',
      o.map((e) => (e.kind === 'file' ? el('file', e.name, { size: String(e.size) }) : el('dir', e.name))),
    ),
  );
}
function oracleListingJson(es: Entry[]): string {
  const o = [...es.filter((e) => e.kind === 'file'), ...es.filter((e) => e.kind === 'dir')];
  return renderJson(
    el('list', [
      o.filter((e) => e.kind === 'file').map((e) => el('file', e.name)),
      o.filter((e) => e.kind === 'dir').map((e) => el('dir', e.name)),
      o.map((e) =>
        el('entry', [
          el('name', e.name),
          el('type', e.kind),
          e.kind === 'file' && el('size', String(e.size)),
          el('modified', isoSeconds(e.mtimeMs)),
        ]),
      ),
    ]),
    ['file', 'dir', 'entry'],
  );
}
function oracleMultistatus(items: DavResource[]): string {
  const doc = el(
    'd:multistatus',
    items.map((r) =>
      el('d:response', [
        el('d:href', r.href),
        el('d:propstat', [
          el('d:prop', [
            el('d:displayname', r.displayName),
            el('d:resourcetype', r.kind === 'dir' ? el('d:collection') : undefined),
            r.kind === 'file' && el('d:getcontentlength', String(r.size)),
            r.kind === 'file' && el('d:getcontenttype', 'application/octet-stream'),
            el('d:getlastmodified', new Date(r.mtimeMs).toUTCString()),
            el('d:creationdate', isoSeconds(r.createdMs)),
          ]),
          el('d:status', 'HTTP/1.1 200 OK'),
        ]),
      ]),
    ),
    { 'xmlns:d': 'DAV:' },
  );
  return `<?xml version="1.0" encoding="utf-8"?>\n${renderXml(doc)}`;
}

const NAMES = ['a', 'b&c', '<x>', 'q"uote', "it's", 'sp ace', 'pct%41', 'ünï', '日本', '😀', 'z'];
const at = (k: number) => Date.UTC(2026, 0, 1) + k * 1001;

function entries(files: number, dirs: number): Entry[] {
  const out: Entry[] = [];
  for (let i = 0; i < files; i++)
    out.push({
      name: `${NAMES[i % NAMES.length]}${i}`,
      kind: 'file',
      size: i * 37,
      mtimeMs: at(i),
      createdMs: at(i) - 5000,
    });
  for (let i = 0; i < dirs; i++)
    out.push({
      name: `${NAMES[(i + 3) % NAMES.length]}d${i}`,
      kind: 'dir',
      size: 4096,
      mtimeMs: at(i + 50),
      createdMs: at(i + 40),
    });
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const SHAPES: [number, number][] = [
  [0, 0],
  [1, 0],
  [0, 1],
  [3, 0],
  [0, 4],
  [1, 1],
  [11, 5],
  [300, 20],
];

describe("streamed renderers give the document model's bytes", () => {
  for (const [files, dirs] of SHAPES) {
    it(`listing of ${files} files and ${dirs} directories: XML and JSON`, () => {
      const es = entries(files, dirs);
      assert.equal([...listingXml(table(es))].join(''), oracleListingXml(es));
      assert.equal([...listingJson(table(es))].join(''), oracleListingJson(es));
    });

    it(`PROPFIND of ${files} files and ${dirs} directories`, () => {
      const es = entries(files, dirs);
      const self: DavResource = {
        href: 'https://h:1/arex/rest/1.1/jobs/j/session/sub/',
        displayName: 'sub',
        kind: 'dir',
        size: 4096,
        mtimeMs: at(1),
        createdMs: at(0),
      };
      const ordered = [...es.filter((e) => e.kind === 'file'), ...es.filter((e) => e.kind === 'dir')];
      const items = [
        self,
        ...ordered.map((e) => ({
          ...e,
          displayName: e.name,
          href: `${self.href}${encodeSegment(e.name)}${e.kind === 'dir' ? '/' : ''}`,
        })),
      ];
      assert.equal([...multistatus(self, table(es))].join(''), oracleMultistatus(items));
    });
  }

  it('PROPFIND Depth 0 or of a file: the resource alone', () => {
    const self: DavResource = {
      href: 'https://h:1/s/f%20g',
      displayName: 'f g',
      kind: 'file',
      size: 12,
      mtimeMs: at(2),
      createdMs: at(2),
    };
    assert.equal([...multistatus(self)].join(''), oracleMultistatus([self]));
  });
});

describe('text streams are pulled and stoppable', () => {
  it('pieces are rendered only as the consumer reads; destroying the stream stops the rendering', async () => {
    let rendered = 0;
    let closed = false;
    function* pieces(): Generator<string> {
      try {
        for (let i = 0; i < 1_000_000; i++) {
          rendered++;
          yield 'x'.repeat(100);
        }
      } finally {
        closed = true;
      }
    }
    const s = textStream(pieces(), 1000);
    const first = await new Promise<Buffer>((resolve) => s.once('data', resolve));
    s.pause();
    assert.equal(first.length, 1000);
    await new Promise((r) => setTimeout(r, 50));
    const soFar = rendered;
    assert.ok(soFar < 200_000, `rendered ${soFar} pieces ahead of a paused reader`);
    s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    assert.ok(closed, 'the generator was closed');
    assert.ok(rendered - soFar < 100, 'nothing rendered after destroy');
  });

  it('between chunks the event loop runs (a timer fires while a long answer is rendered)', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const s = textStream(
      Array.from({ length: 20_000 }, () => 'y'.repeat(50)),
      4096,
    );
    let bytes = 0;
    for await (const c of s) bytes += (c as Buffer).length;
    clearInterval(timer);
    assert.equal(bytes, 1_000_000);
    assert.ok(ticks > 0);
  });
});

describe('the cap on listed entries', () => {
  let f: Fixture;
  let id: string;
  before(async () => {
    f = await makeFixture({ maxListingEntries: 5 });
    id = await f.newJob(A['x-test-dn']);
    const d = f.sessionDir(id);
    await mkdir(join(d, 'five'));
    for (let i = 0; i < 5; i++) await writeFile(join(d, 'five', `f${i}`), 'x');
    await mkdir(join(d, 'six'));
    for (let i = 0; i < 6; i++) await writeFile(join(d, 'six', `f${i}`), 'x');
  });
  after(() => f.close());

  it('a directory at the cap is listed completely, in every format and by PROPFIND', async () => {
    const j = await f.app.inject({
      method: 'GET',
      url: f.url(id, 'five'),
      headers: { ...A, accept: 'application/json' },
    });
    assert.equal(j.statusCode, 200);
    assert.deepEqual(JSON.parse(j.body).file, ['f0', 'f1', 'f2', 'f3', 'f4']);
    const p = await f.app.inject({ method: 'PROPFIND', url: f.url(id, 'five'), headers: { ...A, depth: '1' } });
    assert.equal(p.statusCode, 207);
    assert.equal(p.body.split('<d:response>').length - 1, 6);
  });

  for (const [what, method, headers] of [
    ['GET JSON', 'GET', { accept: 'application/json' }],
    ['GET XML', 'GET', { accept: 'application/xml' }],
    ['GET HTML', 'GET', { accept: 'text/html' }],
    ['PROPFIND Depth 1', 'PROPFIND', { depth: '1', accept: 'application/xml' }],
  ] as const) {
    it(`over the cap: ${what} is a 403 naming the cap`, async () => {
      const r = await f.app.inject({ method, url: f.url(id, 'six'), headers: { ...A, ...headers } });
      assert.equal(r.statusCode, 403);
      assert.match(r.body, /CE_ERR_SESSION_LISTING_TOO_LARGE/);
      assert.match(r.body, /more than 5 entries/);
    });
  }

  it('over the cap, the directory itself (PROPFIND Depth 0) and its files stay reachable', async () => {
    const p = await f.app.inject({ method: 'PROPFIND', url: f.url(id, 'six'), headers: { ...A, depth: '0' } });
    assert.equal(p.statusCode, 207);
    const g = await f.app.inject({ method: 'GET', url: f.url(id, 'six/f5'), headers: A });
    assert.equal(g.statusCode, 200);
    assert.equal(g.body, 'x');
  });
});

describe('answers larger than one chunk', () => {
  let f: Fixture;
  let id: string;
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(A['x-test-dn']);
    const d = f.sessionDir(id);
    for (let i = 0; i < 3000; i++)
      await writeFile(join(d, `a-rather-long-file-name-${String(i).padStart(5, '0')}.root`), '');
  });
  after(() => f.close());

  it('are sent chunked, complete; HEAD gives the same status and headers and no body', async () => {
    for (const [method, headers, status] of [
      ['GET', { accept: 'application/json' }, 200],
      ['PROPFIND', { depth: '1' }, 207],
    ] as const) {
      const g = await f.app.inject({ method, url: f.url(id), headers: { ...A, ...headers } });
      assert.equal(g.statusCode, status);
      assert.ok(g.body.length > 64 * 1024);
      assert.equal(g.headers['content-length'], undefined);
      assert.equal(g.headers['transfer-encoding'], 'chunked');
      if (method === 'GET') assert.equal(JSON.parse(g.body).file.length, 3000);
      else assert.equal(g.body.split('<d:response>').length - 1, 3001);
    }
    const g = await f.app.inject({ method: 'GET', url: f.url(id), headers: { ...A, accept: 'application/xml' } });
    const h = await f.app.inject({ method: 'HEAD', url: f.url(id), headers: { ...A, accept: 'application/xml' } });
    assert.equal(h.statusCode, 200);
    assert.equal(h.body, '');
    assert.equal(h.headers['content-type'], g.headers['content-type']);
  });
});
