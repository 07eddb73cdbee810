import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { A, makeFixture, type Fixture } from '../sessions/fixture.js';
import { DIAGNOSE_NAMES } from '../../src/store/control-dir.js';

const J = { ...A, accept: 'application/json' };

describe('GET/HEAD jobs/<id>/diagnose/<name>', () => {
  let f: Fixture;
  let id: string;
  const rendered: string[] = [];
  before(async () => {
    f = await makeFixture({
      render: (job, name) => {
        rendered.push(name);
        if (name === 'description') return f.store.rawDescription(job.id);
        if (name === 'status') return Buffer.from('ACCEPTED');
        if (name === 'xml')
          return '<ComputingActivity xmlns="http://schemas.ogf.org/glue/2009/03/spec_2.0_r1"><ID>x</ID></ComputingActivity>';
        return undefined;
      },
    });
    id = await f.newJob(A['x-test-dn']);
    await f.control.write(id, 'errors', '2026-01-01T00:00:00Z Job state change UNDEFINED -> ACCEPTED\n');
    await f.control.write(id, 'input', '/in.txt\n');
  });
  after(() => f.close());

  it('a control file: 200 text/plain with its content and length', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.diag(id, 'errors'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'text/plain');
    assert.equal(r.body, '2026-01-01T00:00:00Z Job state change UNDEFINED -> ACCEPTED\n');
    assert.equal(r.headers['content-length'], String(r.rawPayload.length));
  });

  it('rendered items come from the record (description raw text, status, xml as application/xml)', async () => {
    let r = await f.app.inject({ method: 'GET', url: f.diag(id, 'description'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, '&(executable="/bin/true")');
    assert.equal(r.headers['content-type'], 'text/plain');
    r = await f.app.inject({ method: 'GET', url: f.diag(id, 'status'), headers: A });
    assert.equal(r.body, 'ACCEPTED');
    r = await f.app.inject({ method: 'GET', url: f.diag(id, 'xml'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.headers['content-type'], 'application/xml');
    assert.match(r.body, /^<ComputingActivity/);
  });

  it('Range works on files and on rendered items', async () => {
    let r = await f.app.inject({ method: 'GET', url: f.diag(id, 'errors'), headers: { ...A, range: 'bytes=0-9' } });
    assert.equal(r.statusCode, 206);
    assert.equal(r.body, '2026-01-01');
    assert.match(String(r.headers['content-range']), /^bytes 0-9\/\d+$/);
    r = await f.app.inject({ method: 'GET', url: f.diag(id, 'status'), headers: { ...A, range: 'bytes=-3' } });
    assert.equal(r.statusCode, 206);
    assert.equal(r.body, 'TED');
    assert.equal(r.headers['content-range'], 'bytes 5-7/8');
    r = await f.app.inject({ method: 'GET', url: f.diag(id, 'status'), headers: { ...A, range: 'bytes=8-' } });
    assert.equal(r.statusCode, 416);
    assert.equal(r.headers['content-range'], 'bytes */8');
  });

  it('HEAD: headers of GET, no body', async () => {
    for (const name of ['errors', 'description']) {
      const g = await f.app.inject({ method: 'GET', url: f.diag(id, name), headers: A });
      const h = await f.app.inject({ method: 'HEAD', url: f.diag(id, name), headers: A });
      assert.equal(h.statusCode, 200);
      assert.equal(h.body, '');
      assert.equal(h.headers['content-length'], g.headers['content-length']);
      assert.equal(h.headers['content-type'], g.headers['content-type']);
    }
  });

  it('an absent control file is 404 Not found', async () => {
    for (const name of ['failed', 'comment', 'diag', 'acl']) {
      const r = await f.app.inject({ method: 'GET', url: f.diag(id, name), headers: J });
      assert.equal(r.statusCode, 404, name);
      assert.equal(r.statusMessage, 'Not found');
      assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_DIAGNOSE_ABSENT');
    }
  });

  it('every one of the 14 names is recognised (200 or 404 Not found, never unknown)', async () => {
    assert.equal(DIAGNOSE_NAMES.length, 14);
    for (const name of DIAGNOSE_NAMES) {
      const r = await f.app.inject({ method: 'GET', url: f.diag(id, name), headers: J });
      assert.ok(r.statusCode === 200 || JSON.parse(r.body).code === 'CE_ERR_SESSION_DIAGNOSE_ABSENT', name);
    }
  });

  it('an unknown name is 404 Diagnostic item not found, checked before the job', async () => {
    for (const name of ['grami', 'proxy', 'none', 'ERRORS', 'errors.txt', '..', '%2e%2e', 'input%5Fstatus']) {
      for (const job of [id, 'nonexistentjob']) {
        const r = await f.app.inject({ method: 'GET', url: f.diag(job, name), headers: J });
        assert.equal(r.statusCode, 404, `${job} ${name}`);
        if (name !== '..' && name !== '%2e%2e')
          assert.equal(JSON.parse(r.body).code, 'CE_ERR_SESSION_DIAGNOSE_UNKNOWN', name);
      }
    }
    const r = await f.app.inject({ method: 'GET', url: `/arex/rest/1.1/jobs/${id}/diagnose/errors/extra`, headers: J });
    assert.equal(r.statusCode, 404);
    assert.equal(r.statusMessage, 'Diagnostic item not found');
  });

  it('an unknown job is 404 Job not found', async () => {
    const r = await f.app.inject({ method: 'GET', url: f.diag('nonexistentjob', 'errors'), headers: J });
    assert.equal(r.statusCode, 404);
    assert.equal(JSON.parse(r.body).code, 'CE_ERR_JOB_NOT_FOUND');
  });

  it('a control "file" that is a directory is treated as absent', async () => {
    await mkdir(f.control.file(id, 'statistics'), { recursive: true });
    const r = await f.app.inject({ method: 'GET', url: f.diag(id, 'statistics'), headers: J });
    assert.equal(r.statusCode, 404);
  });

  it('PUT, POST and DELETE are 405 with Allow: GET, HEAD', async () => {
    for (const method of ['PUT', 'POST', 'DELETE'] as const) {
      const r = await f.app.inject({ method, url: f.diag(id, 'errors'), headers: A, payload: 'x' });
      assert.equal(r.statusCode, 405, method);
      assert.equal(r.headers.allow, 'GET, HEAD');
    }
  });

  it('uploads show up in input_status as client-uploaded paths', async () => {
    await f.app.inject({ method: 'PUT', url: f.url(id, 'in.txt'), headers: A, payload: 'data' });
    const r = await f.app.inject({ method: 'GET', url: f.diag(id, 'input_status'), headers: A });
    assert.equal(r.body, '/in.txt\n');
  });
});

describe('diagnose without a renderer reads every item from the control directory', () => {
  let f: Fixture;
  let id: string;
  before(async () => {
    f = await makeFixture();
    id = await f.newJob(A['x-test-dn']);
    await f.control.write(id, 'description', 'file text');
  });
  after(() => f.close());

  it('description comes from the file; status is absent', async () => {
    let r = await f.app.inject({ method: 'GET', url: f.diag(id, 'description'), headers: A });
    assert.equal(r.statusCode, 200);
    assert.equal(r.body, 'file text');
    r = await f.app.inject({ method: 'GET', url: f.diag(id, 'status'), headers: A });
    assert.equal(r.statusCode, 404);
  });
});
