// What a fresh service on the default configuration (fork backend, development PKI, no
// metrics listener) does not load at start, and that the first request needing such a
// part is still answered (docs/performance.md, "Memory"): undici (data staging), jose and
// the token verifier (the first bearer token), the Slurm backend (never, on fork),
// prom-client and the metrics registry (never, without metrics.listen), the web
// interface's pages, static files and multipart reader (the first page request).
// The modules the child loads are recorded by a module hook given with --import.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { issueDevToken } from '../../src/auth/token/dev-issuer.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

const HOOKS = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.CERES_TEST_LOADED, url + '\\n');
  return next(url, context);
}`;

describe('parts loaded on first use (real service, default configuration)', () => {
  let dir: string;
  let loadedFile: string;
  let ceres: RunningCeres;
  const loaded = (): string[] => readFileSync(loadedFile, 'utf8').split('\n');
  const has = (re: RegExp): boolean => loaded().some((u) => re.test(u));

  before(async () => {
    dir = tempDir('lazy');
    loadedFile = join(dir, 'loaded.txt');
    writeFileSync(loadedFile, '');
    writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
    writeFileSync(
      join(dir, 'register.mjs'),
      `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
    );
    process.env.CERES_TEST_LOADED = loadedFile;
    ceres = await startCeres({ stateDir: join(dir, 'state'), nodeArgs: ['--import', join(dir, 'register.mjs')] });
  });
  after(async () => {
    if (ceres) await stopCeres(ceres);
    delete process.env.CERES_TEST_LOADED;
    removeDir(dir);
  });

  it('records the modules it loads (the hook works)', () => {
    assert.ok(has(/\/src\/service\/start\.js$/), 'the composition root is recorded');
  });

  it('does not load the Slurm backend, undici or jose at start', () => {
    assert.equal(has(/\/src\/lrms\/slurm\//), false, 'Slurm backend loaded at start');
    assert.equal(has(/\/node_modules\/undici\//), false, 'undici loaded at start');
    assert.equal(has(/\/node_modules\/jose\//), false, 'jose loaded at start');
    assert.equal(
      has(/\/src\/auth\/token\/(verify|issuer-keys|token-authenticator)\.js$/),
      false,
      'token verifier loaded',
    );
  });

  it('does not load prom-client or the metrics registry without a metrics listener', async () => {
    assert.equal(has(/\/node_modules\/prom-client\//), false, 'prom-client loaded at start');
    assert.equal(has(/\/src\/metrics\/registry\.js$/), false, 'the metrics registry loaded');
    // A request goes through the stand-in (no HTTP hook is installed to record it).
    const c = Client.forUser(ceres);
    try {
      const r = await c.req('GET', '/rest/1.0/jobs', undefined, { accept: 'application/json' });
      assert.equal(r.status, 200, r.text);
    } finally {
      await c.agent.close();
    }
    assert.equal(has(/\/node_modules\/prom-client\//), false, 'prom-client loaded by a request');
  });

  it('answers the first bearer token (loading the verifier then) and refuses a bad one', async () => {
    const token = await issueDevToken(ceres.pkiDir, { sub: 'lazy-user', scope: 'compute.read compute.create' });
    const c = Client.withToken(ceres, token);
    try {
      const r = await c.req('GET', '/rest/1.0/jobs', undefined, { accept: 'application/json' });
      assert.equal(r.status, 200, r.text);
    } finally {
      await c.agent.close();
    }
    assert.ok(has(/\/node_modules\/jose\//), 'jose loaded by the first token');
    const bad = Client.withToken(ceres, `${token.slice(0, -4)}AAAA`);
    try {
      const r = await bad.req('GET', '/rest/1.0/jobs', undefined, { accept: 'application/json' });
      assert.equal(r.status, 401, r.text);
    } finally {
      await bad.agent.close();
    }
  });

  it('loads the web pages with the first page request, which is answered with its static files', async () => {
    const WEB_PARTS = /\/src\/api\/web\/(views|pages|layout|assets|style|script|job-history|multipart)\.js$/;
    assert.equal(has(WEB_PARTS), false, 'web pages loaded at start');
    const c = Client.forUser(ceres);
    try {
      const r = await c.req('GET', '/', undefined, { accept: 'text/html' });
      assert.equal(r.status, 200, r.text);
      assert.match(String(r.headers['content-type']), /^text\/html/);
      assert.match(String(r.headers['content-security-policy']), /default-src 'self'/);
      assert.match(r.text, /<title>Overview · Ceres<\/title>/);
      const css = /href="[^"]*\/web\/static\/(ceres\.[0-9a-f]+\.css)"/.exec(r.text)?.[1];
      const htmx = /src="[^"]*\/web\/static\/(htmx\.[0-9a-f]+\.js)"/.exec(r.text)?.[1];
      assert.ok(css !== undefined && htmx !== undefined, 'the page names its static files');
      const s = await c.req('GET', `/web/static/${css}`, undefined, { accept: 'text/css' });
      assert.equal(s.status, 200);
      assert.match(String(s.headers['content-type']), /^text\/css/);
      const h = await c.req('GET', `/web/static/${htmx}`, undefined, { accept: '*/*' });
      assert.equal(h.status, 200);
      assert.ok(h.text.includes('htmx'), 'htmx served');
    } finally {
      await c.agent.close();
    }
    assert.ok(has(/\/src\/api\/web\/pages\.js$/), 'pages loaded by the first page request');
    assert.equal(has(/\/src\/api\/web\/multipart\.js$/), false, 'multipart reader loaded before a form upload');
  });
});
