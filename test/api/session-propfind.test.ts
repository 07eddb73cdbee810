import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';
import { parseXml } from '../../src/doc/parse-xml.js';
import { childrenNamed, firstChild, textOf, type XmlElement } from '../../src/doc/element.js';

/** The body the ARC client's HTTP data plugin sends (A-REX §9.6). */
const ARC_PROPFIND =
  '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:creationdate/><d:displayname/><d:getcontentlength/><d:resourcetype/><d:getlastmodified/></d:prop></d:propfind>';

const ORIGIN = 'https://localhost:8443';

interface Item {
  href: string;
  status: string;
  collection: boolean;
  length: string | undefined;
  name: string;
  lastModified: string;
  created: string;
}

function items(body: string): Item[] {
  const root = parseXml(body);
  assert.equal(root.name, 'd:multistatus');
  assert.equal(root.ns, 'DAV:');
  return childrenNamed(root, 'response').map((r) => {
    const ps = firstChild(r, 'propstat') as XmlElement;
    const prop = firstChild(ps, 'prop') as XmlElement;
    const rt = firstChild(prop, 'resourcetype') as XmlElement;
    const len = firstChild(prop, 'getcontentlength');
    return {
      href: textOf(firstChild(r, 'href') as XmlElement),
      status: textOf(firstChild(ps, 'status') as XmlElement),
      collection: firstChild(rt, 'collection') !== undefined,
      length: len && textOf(len),
      name: textOf(firstChild(prop, 'displayname') as XmlElement),
      lastModified: textOf(firstChild(prop, 'getlastmodified') as XmlElement),
      created: textOf(firstChild(prop, 'creationdate') as XmlElement),
    };
  });
}

describe('PROPFIND on session paths', () => {
  let f: Fixture;
  let id: string;
  let base: string;
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(A['x-test-dn']);
    const d = f.sessionDir(id);
    await writeFile(join(d, 'out.txt'), 'hello\n');
    await writeFile(join(d, 'c++ & co.log'), 'x');
    await writeFile(join(d, 'a b.txt'), 'yy');
    await mkdir(join(d, 'sub', 'dir'), { recursive: true });
    await writeFile(join(d, 'sub', 'deep.txt'), 'deep');
    await writeFile(join(d, 'sub', 'dir', 'deeper.txt'), 'deeper');
    base = `${ORIGIN}/arex/rest/1.0/jobs/${id}/session`;
  });
  after(() => f.close());

  const propfind = (path: string, depth: string | undefined, payload = ARC_PROPFIND, version = '1.0') =>
    f.app.inject({
      method: 'PROPFIND',
      url: f.url(id, path, version),
      headers: { ...A, ...(depth === undefined ? {} : { depth }) },
      payload,
    });

  it('Depth 0 on the session: 207, XML declaration, DAV multistatus with the directory itself', async () => {
    const r = await propfind('', '0');
    assert.equal(r.statusCode, 207);
    assert.equal(r.headers['content-type'], 'application/xml; charset=utf-8');
    assert.ok(r.body.startsWith('<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:">'));
    const it = items(r.body);
    assert.equal(it.length, 1);
    assert.deepEqual(
      {
        href: it[0]?.href,
        status: it[0]?.status,
        collection: it[0]?.collection,
        name: it[0]?.name,
        length: it[0]?.length,
      },
      { href: `${base}/`, status: 'HTTP/1.1 200 OK', collection: true, name: id, length: undefined },
    );
    assert.match(it[0]?.lastModified ?? '', /^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/);
    assert.match(it[0]?.created ?? '', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('Depth 1: the directory and its entries, sorted, absolute hrefs, directories ending in /', async () => {
    const it = items((await propfind('', '1')).body);
    assert.deepEqual(
      it.map((i) => [i.href, i.collection, i.length, i.name]),
      [
        [`${base}/`, true, undefined, id],
        [`${base}/a%20b.txt`, false, '2', 'a b.txt'],
        [`${base}/c++%20&%20co.log`, false, '1', 'c++ & co.log'],
        [`${base}/out.txt`, false, '6', 'out.txt'],
        [`${base}/sub/`, true, undefined, 'sub'],
      ],
    );
    assert.ok(it.every((i) => i.status === 'HTTP/1.1 200 OK'));
  });

  it('the XML escapes & in hrefs and names', async () => {
    const r = await propfind('', '1');
    assert.ok(
      r.body.includes(
        '<d:href>https://localhost:8443/arex/rest/1.0/jobs/' + id + '/session/c++%20&amp;%20co.log</d:href>',
      ),
    );
  });

  it('a file: one response without collection, with its length; Depth is irrelevant', async () => {
    for (const depth of ['0', '1']) {
      const it = items((await propfind('out.txt', depth)).body);
      assert.deepEqual(
        it.map((i) => [i.href, i.collection, i.length, i.name]),
        [[`${base}/out.txt`, false, '6', 'out.txt']],
      );
    }
  });

  it('a sub-directory, with or without a trailing slash', async () => {
    for (const p of ['sub', 'sub/']) {
      const it = items((await propfind(p, '1')).body);
      assert.deepEqual(
        it.map((i) => i.href),
        [`${base}/sub/`, `${base}/sub/deep.txt`, `${base}/sub/dir/`],
      );
    }
  });

  it('absent, infinity or odd Depth values are served as Depth 1, never deeper', async () => {
    for (const depth of [undefined, 'infinity', '2', '-1', 'x', '']) {
      const it = items((await propfind('', depth)).body);
      assert.equal(it.length, 5, String(depth));
      assert.ok(!it.some((i) => i.href.includes('deep.txt')), String(depth));
    }
  });

  it('an empty body is allprop', async () => {
    const r = await propfind('', '0', '');
    assert.equal(r.statusCode, 207);
  });

  it('a missing path is 404', async () => {
    const r = await propfind('nosuchfile', '0');
    assert.equal(r.statusCode, 404);
  });

  it('a malformed or foreign body is 400', async () => {
    for (const body of [
      '<d:propfind xmlns:d="DAV:">',
      '<propfind/>',
      '<x:propfind xmlns:x="urn:other"/>',
      'not xml',
      '<!DOCTYPE x [<!ENTITY a "b">]><d:propfind xmlns:d="DAV:"/>',
    ]) {
      const r = await f.app.inject({
        method: 'PROPFIND',
        url: f.url(id, ''),
        headers: { ...A, depth: '0', accept: 'application/json' },
        payload: body,
      });
      assert.equal(r.statusCode, 400, body);
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_BAD_PROPFIND');
    }
  });

  it('an over-long body is 413', async () => {
    const r = await propfind('', '0', `<d:propfind xmlns:d="DAV:">${' '.repeat(70 * 1024)}</d:propfind>`);
    assert.equal(r.statusCode, 413);
  });

  it('hrefs follow the version of the request', async () => {
    const it = items((await propfind('', '0', ARC_PROPFIND, '1.1')).body);
    assert.equal(it[0]?.href, `${ORIGIN}/arex/rest/1.1/jobs/${id}/session/`);
  });

  /**
   * What arcget does (A-REX §9.6): stat the URL with Depth 0 (needs 200/207, a
   * multistatus root, a first response with a 200 propstat, collection ⇒ directory),
   * list with Depth 1, make each href relative by cutting "<listing URL>/" off WITHOUT
   * %-decoding it, skip the empty one (the directory itself), recurse into
   * directories, and GET every file at "<listing URL>/<relative>" encoded once more
   * (the client percent-encodes its URL paths). Names made of URI path characters
   * survive this; see docs/sessions.md for the others.
   */
  it('an arcget-style walk downloads the whole tree, sub-directories included', async () => {
    const job = await f.newJob(A['x-test-dn']);
    const d = f.sessionDir(job);
    await writeFile(join(d, 'out.txt'), 'hello\n');
    await writeFile(join(d, "c++&co(1),v=2;x@y:z!$'*.log"), 'x');
    await mkdir(join(d, 'sub', 'dir'), { recursive: true });
    await writeFile(join(d, 'sub', 'deep.txt'), 'deep');
    await writeFile(join(d, 'sub', 'dir', 'deeper.txt'), 'deeper');
    await mkdir(join(d, 'sub', 'empty'));
    const clientEncode = (p: string) =>
      p.replace(/[^A-Za-z0-9\-._~/]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
    const root = f.url(job, '', '1.0');
    const got = new Map<string, string>();
    const walk = async (rel: string): Promise<void> => {
      const url = clientEncode(rel === '' ? root : `${root}/${rel}`);
      const stat = await f.app.inject({
        method: 'PROPFIND',
        url,
        headers: { ...A, depth: '0' },
        payload: ARC_PROPFIND,
      });
      assert.ok(stat.statusCode === 200 || stat.statusCode === 207);
      assert.equal(items(stat.body)[0]?.collection, true);
      const list = await f.app.inject({
        method: 'PROPFIND',
        url,
        headers: { ...A, depth: '1' },
        payload: ARC_PROPFIND,
      });
      const prefix = `${ORIGIN}${rel === '' ? root : `${root}/${rel}`}/`;
      for (const i of items(list.body)) {
        assert.ok(i.href.startsWith(prefix), i.href);
        const name = i.href.slice(prefix.length).replace(/\/$/, '');
        if (name === '') continue;
        const child = rel === '' ? name : `${rel}/${name}`;
        if (i.collection) await walk(child);
        else {
          const g = await f.app.inject({ method: 'GET', url: clientEncode(`${root}/${child}`), headers: A });
          assert.equal(g.statusCode, 200, child);
          got.set(child, g.body);
        }
      }
    };
    await walk('');
    assert.deepEqual(Object.fromEntries([...got].sort()), {
      "c++&co(1),v=2;x@y:z!$'*.log": 'x',
      'out.txt': 'hello\n',
      'sub/deep.txt': 'deep',
      'sub/dir/deeper.txt': 'deeper',
    });
  });
});
