// Requests as browsers and odd clients send them, against the real `ceres serve`:
//  - cross-site state-changing requests (a form post from another web site, which the
//    browser sends with the user's certificate) are refused and change nothing, while
//    the same requests from the service's own origin, or without browser headers, work;
//  - the published service URL names the host the client addressed (or the configured one);
//  - doubled slashes in the route part of a path are collapsed, never in a session path.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { signProxyFromCsr } from '../../src/pki/issue.js';

const SLEEPER = '&(executable="/bin/sleep")(arguments="60")(jobname="sleeper")';
/** A job that waits for a file the client uploads. */
const UPLOAD_JOB = '&(executable="/bin/cat")(arguments="in.txt")(inputfiles=("in.txt" ""))(stdout="out")';

const pathOf = (location: string): string => location.replace(/^\/arex/, '');

/**
 * GET with an arbitrary Host header (HTTP clients derive the TLS server name from Host;
 * here it stays `localhost`, which the development host certificate names).
 */
function getWithHost(
  ceres: RunningCeres,
  path: string,
  host: string,
  port = ceres.port,
): Promise<{ status: number; text: string }> {
  const pem = readFileSync(join(ceres.pkiDir, 'userproxy.pem'));
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path: `/arex${path}`,
        servername: 'localhost',
        cert: pem,
        key: pem,
        ca: readFileSync(join(ceres.pkiDir, 'ca.pem')),
        headers: { host, accept: 'application/json' },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const urlsIn = (text: string): string[] => [
  ...new Set([...text.matchAll(/"URL":"([^"]*)"/g)].map((m) => m[1] as string)),
];

describe('browser requests, published host, doubled slashes (ceres serve)', () => {
  let ceres: RunningCeres;
  let c: Client;
  let self: string;
  let crossSite: Record<string, Record<string, string>>;
  let sameOrigin: Record<string, string>;
  const jobIds = async (): Promise<string[]> =>
    ((await c.req('GET', '/rest/1.1/jobs')).json().job as { id: string }[]).map((j) => j.id).sort();
  const refused = (r: { status: number; text: string }, what: string): void => {
    assert.equal(r.status, 403, `${what}: ${r.text}`);
    assert.equal(JSON.parse(r.text).code, 'CE_ERR_HTTP_CROSS_SITE', what);
  };

  before(async () => {
    ceres = await startCeres();
    c = Client.forUser(ceres);
    self = `https://127.0.0.1:${ceres.port}`;
    crossSite = {
      'form post from another site': {
        origin: 'https://evil.example',
        'sec-fetch-site': 'cross-site',
        'content-type': 'text/plain',
      },
      'Origin: null': { origin: 'null' },
      'Sec-Fetch-Site: same-site alone': { 'sec-fetch-site': 'same-site' },
      'Sec-Fetch-Site: cross-site alone': { 'sec-fetch-site': 'cross-site' },
      'another port of this host': { origin: `https://127.0.0.1:${ceres.port + 1}` },
      'plain http origin of this host': { origin: `http://127.0.0.1:${ceres.port}` },
    };
    sameOrigin = { origin: self, 'sec-fetch-site': 'same-origin' };
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('a cross-site submission is refused in every form and creates no job', async () => {
    const before = await jobIds();
    for (const [what, h] of Object.entries(crossSite)) {
      refused(await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")', h), what);
      refused(
        await c.req('POST', '/rest/1.0/jobs?action=new', '&(executable="/bin/true")', {
          ...h,
          'content-type': 'application/x-www-form-urlencoded',
        }),
        what,
      );
    }
    assert.deepEqual(await jobIds(), before);
  });

  it("the same submission from the service's own origin, or without browser headers, works", async () => {
    const r = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")', {
      ...sameOrigin,
      'content-type': 'text/plain',
    });
    assert.equal(r.status, 201, r.text);
    const r2 = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")', {
      origin: `https://127.0.0.1:${ceres.port}`.toUpperCase().replace('HTTPS', 'https'),
    });
    assert.equal(r2.status, 201, r2.text);
    const [item] = await c.submit('&(executable="/bin/true")');
    assert.equal(item['status-code'], '201');
  });

  it('cross-site GETs (which change nothing and cannot be read without CORS) still work', async () => {
    const r = await c.req('GET', '/rest/1.1/jobs', undefined, crossSite['form post from another site']);
    assert.equal(r.status, 200);
  });

  it('a cross-site kill is refused and the job keeps running; a same-origin kill works', async () => {
    const [job] = await c.submit(SLEEPER);
    await c.waitFor([job.id], ['RUNNING']);
    for (const [what, h] of Object.entries(crossSite)) {
      refused(
        await c.req('POST', '/rest/1.1/jobs?action=kill', JSON.stringify({ job: [{ id: job.id }] }), {
          ...h,
          'content-type': 'application/json',
        }),
        what,
      );
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await c.status([job.id])).get(job.id), 'RUNNING');
    const k = await c.req('POST', '/rest/1.1/jobs?action=kill', JSON.stringify({ job: [{ id: job.id }] }), {
      ...sameOrigin,
      'content-type': 'application/json',
    });
    assert.equal(k.status, 201);
    assert.equal((await c.waitFor([job.id], ['KILLED'])).get(job.id), 'KILLED');
  });

  it('a cross-site delegation request and a cross-site delegation PUT are refused and change nothing', async () => {
    const list = async (): Promise<unknown> => (await c.req('GET', '/rest/1.1/delegations')).json();
    const before = await list();
    for (const [what, h] of Object.entries(crossSite))
      refused(await c.req('POST', '/rest/1.1/delegations?action=new', '', h), what);
    assert.deepEqual(await list(), before);

    const n = await c.req('POST', '/rest/1.1/delegations?action=new', '', { accept: '' });
    assert.equal(n.status, 201);
    const location = pathOf(String(n.headers.location));
    const proxy = readFileSync(join(ceres.pkiDir, 'userproxy.pem'), 'utf8');
    const signed = await signProxyFromCsr(n.text, proxy, proxy);
    const get = async (): Promise<{ status: number; text: string }> => {
      const r = await c.req('POST', `${location}?action=get`, '');
      return { status: r.status, text: r.text };
    };
    const unset = await get();
    for (const [what, h] of Object.entries(crossSite)) refused(await c.req('PUT', location, signed.chainPem, h), what);
    assert.deepEqual(await get(), unset);
    const p = await c.req('PUT', location, signed.chainPem, sameOrigin);
    assert.equal(p.status, 200, p.text);
    const set = await get();
    assert.equal(set.status, 200);
    assert.notDeepEqual(set, unset);
  });

  it('a cross-site file PUT is refused and writes nothing; a same-origin one is stored', async () => {
    // A second input that never comes keeps the job waiting, so the first stays in the
    // session (a job that ran and finished keeps only its outputs).
    const [job] = await c.submit(
      '&(executable="/bin/cat")(arguments="in.txt")(inputfiles=("in.txt" "")("later.txt" ""))(stdout="out")',
    );
    const file = `/rest/1.1/jobs/${job.id}/session/in.txt`;
    for (const [what, h] of Object.entries(crossSite)) refused(await c.req('PUT', file, 'forged\n', h), what);
    assert.equal((await c.req('GET', file)).status, 404);
    const p = await c.req('PUT', file, 'mine\n', sameOrigin);
    assert.ok(p.status === 200 || p.status === 201, p.text);
    assert.equal((await c.req('GET', file)).text, 'mine\n');
  });

  it('the service URL printed and published names 127.0.0.1 when it listens there', async () => {
    assert.equal(ceres.url, `${self}/arex`);
    assert.match(ceres.output(), new RegExp(`^ceres: service URL ${self.replaceAll('.', '\\.')}/arex$`, 'm'));
    const info = await c.req('GET', '/rest/1.0/info');
    assert.deepEqual(urlsIn(info.text), [`${self}/arex`]);
    assert.match(info.text, /"ID":"urn:ogf:ComputingService:127\.0\.0\.1:arex"/);
    assert.doesNotMatch(info.text, /localhost/);
    const xml = await c.req('GET', '/rest/1.0/info', undefined, { accept: 'text/xml' });
    assert.match(xml.text, new RegExp(`<URL>${self.replaceAll('.', '\\.')}/arex</URL>`));
    // Job documents agree.
    const [job] = await c.submit('&(executable="/bin/true")');
    const ji = await c.req('POST', '/rest/1.1/jobs?action=info', JSON.stringify({ job: [{ id: job.id }] }), {
      'content-type': 'application/json',
    });
    assert.match(ji.text, new RegExp(`urn:caid:127\\.0\\.0\\.1:[^"]*:${job.id}`));
    assert.doesNotMatch(ji.text, /localhost/);
    const local = await c.req('GET', `/rest/1.1/jobs/${job.id}/diagnose/local`);
    assert.match(local.text, new RegExp(`headnode=${self.replaceAll('.', '\\.')}/arex`));
  });

  it('the info document follows the host the client addressed; a malformed Host is not echoed', async () => {
    const viaName = await getWithHost(ceres, '/rest/1.0/info', `localhost:${ceres.port}`);
    assert.deepEqual(urlsIn(viaName.text), [`https://localhost:${ceres.port}/arex`]);
    for (const host of [
      'evil.example/"><script>x</script>',
      'a b',
      `127.0.0.1:${ceres.port}@evil.example`,
      'x'.repeat(300),
    ]) {
      const r = await getWithHost(ceres, '/rest/1.0/info', host);
      assert.equal(r.status, 200);
      assert.deepEqual(urlsIn(r.text), [`${self}/arex`], host);
      assert.doesNotMatch(r.text, /evil|<script|xxxxx/);
    }
  });

  it('doubled slashes in the route part are collapsed (A-REX does), not in a session path', async () => {
    assert.equal((await c.req('GET', '//rest/1.0//jobs')).status, 200);
    assert.equal((await c.req('GET', '/rest//1.1/info/')).status, 200);
    const [job] = await c.submit(UPLOAD_JOB);
    const put = await c.req('PUT', `/rest/1.1//jobs//${job.id}//session/in.txt`, 'via doubled slashes\n');
    assert.ok(put.status === 200 || put.status === 201, put.text);
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${job.id}/session/in.txt`)).text, 'via doubled slashes\n');
    const inSession = await c.req('PUT', `/rest/1.1/jobs/${job.id}/session//other.txt`, 'x');
    assert.equal(inSession.status, 400, inSession.text);
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${job.id}/session/a//b`)).status, 400);
    assert.equal((await c.req('GET', `/rest/1.1/jobs/${job.id}/session/other.txt`)).status, 404);
  });
});

describe('published URL with a configured public URL (ceres serve)', () => {
  let ceres: RunningCeres;
  let c: Client;
  let port: number;
  before(async () => {
    // The printed URL is the configured one: the port comes from the listener's log line.
    ceres = await startCeres({
      config: {
        log: { level: 'info' },
        publicUrl: 'https://ce.example.org/arex',
        cluster: { hostname: 'ce.example.org' },
      },
    });
    // The configured name does not resolve here: talk to the listener directly.
    port = Number(/Server listening at https:\/\/127\.0\.0\.1:(\d+)/.exec(ceres.output())?.[1]);
    c = new Client(`https://127.0.0.1:${port}/arex`, join(ceres.pkiDir, 'userproxy.pem'), join(ceres.pkiDir, 'ca.pem'));
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('the info document and job documents say the configured URL and name, whatever Host was sent', async () => {
    assert.equal(ceres.url, 'https://ce.example.org/arex');
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, 'ce.example.org']) {
      const info = await getWithHost(ceres, '/rest/1.0/info', host, port);
      assert.deepEqual(urlsIn(info.text), ['https://ce.example.org/arex']);
      assert.match(info.text, /urn:ogf:ComputingService:ce\.example\.org:arex/);
      assert.doesNotMatch(info.text, /127\.0\.0\.1|localhost/);
    }
    const [job] = await c.submit('&(executable="/bin/true")');
    const ji = await c.req('POST', '/rest/1.1/jobs?action=info', JSON.stringify({ job: [{ id: job.id }] }), {
      'content-type': 'application/json',
    });
    assert.match(ji.text, new RegExp(`urn:caid:ce\\.example\\.org:[^"]*:${job.id}`));
  });

  it('a form post from the configured public origin counts as same-origin', async () => {
    const r = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")', {
      origin: 'https://ce.example.org',
      'sec-fetch-site': 'same-origin',
    });
    assert.equal(r.status, 201, r.text);
  });
});
