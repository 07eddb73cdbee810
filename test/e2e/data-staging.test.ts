// Server-side data staging through the whole service: a job with two remote inputs,
// one uploaded input and one remote output reaches FINISHED with the right files in
// the right places; a failed download fails the job with a reason a user can act on;
// the shared cache serves a second job without a second download.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../helpers/service.js';
import { startStagingService, type StagingService } from '../helpers/staging-service.js';
import type { TestServer } from '../staging/helpers/test-server.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

describe('data staging end to end', () => {
  let s: StagingService;
  let c: Client;
  let srv: TestServer;
  before(async () => {
    s = await startStagingService({
      '/in/a.txt': 'alpha\n',
      '/in/b.txt': 'beta\n',
      '/in/shared.dat': 'cached content\n',
    });
    ({ c, srv } = s);
  });
  after(() => s.stop());

  it('two remote inputs, one uploaded input, one remote output: FINISHED, files in place', async () => {
    const xrsl = `&(executable="/bin/sh")(arguments="-c" "cat a.txt b.txt up.txt > result.txt")
      (inputfiles=("a.txt" "${srv.url('/in/a.txt')}")("b.txt" "${srv.url('/in/b.txt')}")("up.txt" ""))
      (outputfiles=("result.txt" "${srv.url('/out/result.txt')}"))(stdout="o")`;
    const [item] = await c.submit(xrsl);
    await c.waitFor([item.id], ['PREPARING']);
    assert.equal((await c.req('PUT', `/rest/1.1/jobs/${item.id}/session/up.txt`, 'gamma\n')).status, 200);
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FINISHED', (await c.req('GET', `/rest/1.1/jobs/${item.id}/diagnose/errors`)).text);
    assert.equal(srv.stored.get('/out/result.txt')?.toString(), 'alpha\nbeta\ngamma\n');
    // Uploaded outputs leave the session; inputs not listed as outputs are pruned.
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${item.id}/session/result.txt`)).status, 404);
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${item.id}/session/a.txt`)).status, 404);
    const stats = await c.req('GET', `/rest/1.1/jobs/${item.id}/diagnose/statistics`);
    assert.match(stats.text, /inputfile:url=.*a\.txt/);
  });

  it('a missing remote input fails the job with the URL and the status in the reason', async () => {
    const [item] = await c.submit(`&(executable="/bin/true")(inputfiles=("x" "${srv.url('/in/missing')}"))`);
    const st = await c.waitFor([item.id], FINAL);
    assert.equal(st.get(item.id), 'FAILED');
    const [info] = await c.action('info', [item.id]);
    assert.match(JSON.stringify(info.info_document.ComputingActivity.Error), /404/);
  });

  it('the cache serves a second job without a second download', async () => {
    const job = `&(executable="/bin/cat")(arguments="s.dat")(inputfiles=("s.dat" "${srv.url('/in/shared.dat')}"))(stdout="o")`;
    const [a] = await c.submit(job);
    assert.equal((await c.waitFor([a.id], FINAL)).get(a.id), 'FINISHED');
    const gets = () => srv.hits.filter((h) => h.method === 'GET' && h.path === '/in/shared.dat').length;
    const before = gets();
    const [b] = await c.submit(job);
    assert.equal((await c.waitFor([b.id], FINAL)).get(b.id), 'FINISHED');
    assert.equal(gets(), before);
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${b.id}/session/o`)).text, 'cached content\n');
  });
});
