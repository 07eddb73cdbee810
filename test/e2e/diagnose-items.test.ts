// Every diagnose item (`jobs/<id>/diagnose/<name>`, the 14 names of the interface) through
// a real job life cycle on the real service: 200 with A-REX's content where A-REX serves
// the file, 404 `Not found` exactly where A-REX answers 404 (`failed` of a job that did
// not fail, `comment`, `acl`, `output_status` before any upload). Clients that fetch every
// item (pyarcrest's diagnose downloads, arcget's log directory) find the same files.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '../helpers/service.js';
import { startStagingService, type StagingService } from '../helpers/staging-service.js';
import type { TestServer } from '../staging/helpers/test-server.js';

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

describe('diagnose items through a job life cycle', () => {
  let s: StagingService;
  let c: Client;
  let srv: TestServer;
  before(async () => {
    s = await startStagingService({ '/in/a.txt': 'alpha\n' });
    ({ c, srv } = s);
  });
  after(() => s.stop());

  const get = (id: string, name: string, method = 'GET') => c.req(method, `/rest/1.1/jobs/${id}/diagnose/${name}`);
  const errorsOf = async (id: string): Promise<string> => (await get(id, 'errors')).text;

  /** Status, content type and body of each named item, for one comparison. */
  async function items(id: string, names: string[]): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const name of names) {
      const r = await get(id, name);
      out[name] =
        r.status === 200 ? `200 ${String(r.headers['content-type'])} ${JSON.stringify(r.text)}` : `${r.status}`;
    }
    return out;
  }

  it('a finished job with an uploaded input and a kept output: each item as A-REX serves it', async () => {
    const [item] = await c.submit(
      '&(executable="/bin/cat")(arguments="in.txt")(stdout="out.txt")(inputfiles=("in.txt" ""))(outputfiles=("out.txt" ""))(jobname="d1")',
    );
    const id = item.id as string;
    assert.equal((await c.waitFor([id], ['PREPARING'])).get(id), 'PREPARING');
    // Waiting for the client's upload: the input is still to be delivered.
    assert.deepEqual(await items(id, ['input', 'output', 'input_status', 'statistics', 'output_status']), {
      input: '200 text/plain "/in.txt\\n"',
      output: '200 text/plain "/out.txt\\n"',
      input_status: '200 text/plain "\\n"',
      statistics: '200 text/plain ""',
      output_status: '404',
    });
    assert.equal((await c.req('PUT', `/rest/1.1/jobs/${id}/session/in.txt`, 'payload\n')).status, 200);
    assert.equal((await c.waitFor([id], FINAL)).get(id), 'FINISHED', await errorsOf(id));

    assert.deepEqual(
      await items(id, [
        'input',
        'output',
        'input_status',
        'statistics',
        'status',
        'failed',
        'comment',
        'acl',
        'output_status',
      ]),
      {
        input: '200 text/plain ""',
        output: '200 text/plain "/out.txt\\n"',
        input_status: '200 text/plain "\\n/in.txt\\n"',
        statistics: '200 text/plain ""',
        status: '200 text/plain "FINISHED"',
        failed: '404',
        comment: '404',
        acl: '404',
        output_status: '404',
      },
    );
    for (const name of ['local', 'errors', 'description', 'diag']) {
      const r = await get(id, name);
      assert.equal(r.status, 200, name);
      assert.equal(r.headers['content-type'], 'text/plain', name);
      assert.ok(r.text.length > 0, name);
    }
    const xml = await get(id, 'xml');
    assert.equal(xml.status, 200);
    assert.equal(xml.headers['content-type'], 'application/xml');
    // HEAD of an empty item: its headers, length 0.
    const head = await get(id, 'input', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers['content-length'], '0');
    // An absent item is A-REX's 404 `Not found`, not the unknown name's.
    assert.match((await get(id, 'acl')).text, /CE_ERR_SESSION_DIAGNOSE_ABSENT/);
  });

  it('a transfer is recorded in `statistics`; an output with a target is listed with it and, uploaded, in `output_status`', async () => {
    const [item] = await c.submit(
      `&(executable="/bin/cat")(arguments="a.txt")(stdout="o")(inputfiles=("a.txt" "${srv.url('/in/a.txt')}"))(outputfiles=("o" "${srv.url('/out/o')}"))`,
    );
    const id = item.id as string;
    assert.equal((await c.waitFor([id], FINAL)).get(id), 'FINISHED', await errorsOf(id));
    assert.equal((await get(id, 'input')).text, '');
    assert.equal((await get(id, 'output')).text, `/o ${srv.url('/out/o')}\n`);
    const stats = (await get(id, 'statistics')).text;
    assert.match(stats, /^inputfile:url=.*\/in\/a\.txt,size=6,/m);
    assert.match(stats, /^outputfile:url=.*\/out\/o,size=6,/m);
    const uploaded = await get(id, 'output_status');
    assert.equal(uploaded.status, 200);
    assert.match(uploaded.text, /^\/o http:/);
  });

  it('a failed download: `input` keeps the input that never arrived, its URL without the password; `failed` holds the reason', async () => {
    const missing = srv.url('/in/missing').replace('://', '://reader:s3cret@');
    const [item] = await c.submit(
      `&(executable="/bin/true")(inputfiles=("got.txt" "${srv.url('/in/a.txt')}")("x.dat" "${missing}"))(outputfiles=("res" ""))`,
    );
    const id = item.id as string;
    assert.equal((await c.waitFor([id], FINAL)).get(id), 'FAILED');
    const input = await get(id, 'input');
    assert.equal(input.status, 200);
    assert.equal(input.text, `/x.dat ${missing.replace('s3cret', '***')}\n`, 'the delivered input is not listed');
    assert.doesNotMatch(input.text, /s3cret/);
    const failed = await get(id, 'failed');
    assert.equal(failed.status, 200);
    assert.match(failed.text, /\/in\/missing: 404/);
    assert.doesNotMatch(failed.text, /s3cret/);
    assert.equal((await get(id, 'output')).text, '/res\n');
  });

  it('a job killed while it waited for its upload: the upload stays in `input`, `failed` says why', async () => {
    const [item] = await c.submit('&(executable="/bin/true")(inputfiles=("never.txt" ""))');
    const id = item.id as string;
    assert.equal((await c.waitFor([id], ['PREPARING'])).get(id), 'PREPARING');
    await c.action('kill', [id]);
    assert.equal((await c.waitFor([id], FINAL)).get(id), 'KILLED');
    assert.deepEqual(await items(id, ['input', 'input_status', 'output', 'statistics']), {
      input: '200 text/plain "/never.txt\\n"',
      input_status: '200 text/plain "\\n"',
      output: '200 text/plain ""',
      statistics: '200 text/plain ""',
    });
    assert.equal((await get(id, 'failed')).status, 200);
  });

  it('a wiped job: its staging lists are gone (404) as A-REX removes them; the kept log still answers', async () => {
    const [item] = await c.submit(
      '&(executable="/bin/echo")(arguments="x")(stdout="o")(outputfiles=("o" ""))(inputfiles=("i" ""))(lifetime="1")',
    );
    const id = item.id as string;
    assert.equal((await c.waitFor([id], ['PREPARING'])).get(id), 'PREPARING');
    assert.equal((await c.req('PUT', `/rest/1.1/jobs/${id}/session/i`, 'i')).status, 200);
    assert.equal((await c.waitFor([id], ['WIPED'], 30_000)).get(id), 'WIPED');
    // WIPED is stored before the control files go: poll for the outcome.
    const deadline = Date.now() + 10_000;
    while ((await get(id, 'input_status')).status !== 404 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await items(id, ['input', 'output', 'input_status', 'output_status']), {
      input: '404',
      output: '404',
      input_status: '404',
      output_status: '404',
    });
    assert.equal((await get(id, 'errors')).status, 200);
  });

  it('a name outside the 14 is 404 `Diagnostic item not found`, even one the control directory holds', async () => {
    const [item] = await c.submit('&(executable="/bin/true")');
    for (const name of ['proxy', 'grami', 'input_status.tmp', 'INPUT']) {
      const r = await get(item.id as string, name);
      assert.equal(r.status, 404, name);
      assert.match(r.text, /CE_ERR_SESSION_DIAGNOSE_UNKNOWN/, name);
    }
  });
});
