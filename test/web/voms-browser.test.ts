/**
 * The browser rule for VO members, with real VOMS proxies (voms-proxy-fake) and headless
 * Chromium presenting the plain certificates, on the real service with a VO-only
 * authorization: a member's browser is refused (with why and what to ask for, on a page
 * whose link leads to no refusal) until their proxy authenticated; then it reads but may
 * not act; an attribute certificate moved into another user's proxy admits nobody; when
 * the window passes the access ends, and rows past it are pruned. Skipped without chromium
 * or voms-proxy-fake, unless required (CERES_REQUIRE_BROWSER, CERES_REQUIRE_VOMS).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Browser, BrowserContext } from 'playwright-core';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { toOneline } from '../../src/pki/dn.js';
import { pemBlocks } from '../../src/pki/certificate.js';
import { certificateContext, chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { acExtension, proxyWithAc, runVomsProxyFake, serverFromCaFiles, vomsSkip } from '../auth/voms/voms-fixture.js';

const HOST = 'voms.example.org';
const FQANS = ['/atlas/Role=NULL/Capability=NULL'];
const LONG = '&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="member job")';
const DAY_MS = 24 * 3600 * 1000;

describe('browsers of VO members (real VOMS proxies, real browser)', { skip: chromiumSkip || vomsSkip }, () => {
  let work: string;
  let ceres: RunningCeres;
  let browser: Browser;
  let member: BrowserContext;
  let outsider: BrowserContext;
  let jobId: string;
  /** Proxy files by name, and one client each (made on first use). */
  const files: Record<string, string> = {};
  const clients = new Map<string, Client>();
  const client = (name: string): Client => {
    let c = clients.get(name);
    if (c === undefined) clients.set(name, (c = new Client(ceres.url, files[name]!, join(ceres.pkiDir, 'ca.pem'))));
    return c;
  };

  before(async () => {
    work = tempDir('voms-browser');
    const pki = await initDevPki(join(work, 'state', 'pki'));
    const server = await serverFromCaFiles(work, pki.files.caCert, pki.files.caKey, HOST);
    const vomsDir = join(work, 'vomsdir');
    mkdirSync(join(vomsDir, 'atlas'), { recursive: true });
    writeFileSync(join(vomsDir, 'atlas', `${HOST}.lsc`), `${server.dn}\n${toOneline(server.cert.issuer)}\n`);
    const certDir = pki.files.certificatesDir;
    const other = await addDevUser(pki.dir, 'outsider');
    const write = (name: string, pem: string): void => {
      files[name] = join(work, `${name}.pem`);
      writeFileSync(files[name], pem, { mode: 0o600 });
    };
    const proxyOf = async (cred: { certFile: string; keyFile: string }) =>
      (await runVomsProxyFake(work, certDir, cred, { vo: 'atlas', fqans: FQANS, server, host: HOST })).pem;
    write('atlas', await proxyOf({ certFile: pki.files.userCert, keyFile: pki.files.userKey }));
    write('outsiderAtlas', await proxyOf(other));
    // The outsider's own proxy carrying the AC the VOMS server issued to the member.
    const otherPem = readFileSync(other.keyFile, 'utf8') + readFileSync(other.certFile, 'utf8');
    const atlasPem = readFileSync(files.atlas!, 'utf8');
    write(
      'stolen',
      (
        await proxyWithAc(
          { pem: otherPem, ders: pemBlocks(otherPem) },
          acExtension({ pem: atlasPem, ders: pemBlocks(atlasPem) }),
        )
      ).pem,
    );
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        vomsDir,
        authorization: { groups: [{ name: 'atlas', match: [{ voms: '/atlas' }] }], allow: ['atlas'] },
      },
    });
    const origin = new URL(ceres.url).origin;
    browser = await launchChromium();
    // Absolute certificate paths (join keeps them).
    member = await certificateContext(browser, origin, '/', { cert: pki.files.userCert, key: pki.files.userKey });
    outsider = await certificateContext(browser, origin, '/', { cert: other.certFile, key: other.keyFile });
  });
  after(async () => {
    await member?.close();
    await outsider?.close();
    await browser?.close();
    for (const c of clients.values()) await c.close();
    if (ceres !== undefined) await stopCeres(ceres);
    if (work) removeDir(work);
  });

  /** Status and text of a page in `ctx`. */
  const visit = async (ctx: BrowserContext, path: string) => {
    const p = await ctx.newPage();
    const r = await p.goto(`${ceres.url}${path}`);
    return { p, status: r?.status(), text: (await p.locator('main').textContent()) ?? '' };
  };

  it("refuses a member's browser before any proxy was seen, saying why and what to ask for; its link is not refused", async () => {
    const { p, status, text } = await visit(member, '/');
    assert.equal(status, 403);
    assert.match(text, /never a VOMS proxy/);
    assert.match(text, /voms-proxy-init/);
    assert.match(text, /admitted for 7 days, read-only/);
    assert.equal(await p.locator('nav').count(), 0, 'no navigation to pages that refuse too');
    const links = await p.locator('main a').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
    assert.ok(links.length > 0);
    for (const l of links) assert.equal((await p.goto(new URL(l, ceres.url).toString()))?.status(), 200, l);
    await p.close();
  });

  it('admits the browser read-only once the proxy authenticated: pages yes, actions no', async () => {
    const [item] = await client('atlas').submit(LONG);
    jobId = item.id as string;
    const list = await visit(member, '/web/jobs');
    assert.equal(list.status, 200);
    assert.match(list.text, /member job/);
    const job = await visit(member, `/web/jobs/${jobId}`);
    assert.equal(job.status, 200);
    await job.p.getByRole('button', { name: 'Kill' }).click();
    await job.p.getByText(/lets it look but not act/).waitFor();
    assert.equal((await client('atlas').status([jobId])).get(jobId) === 'KILLED', false);
    const form = await visit(member, '/web/submit');
    assert.equal(form.status, 403);
    assert.match(form.text, /look but not act/);
    for (const v of [list, job, form]) await v.p.close();
  });

  it("an AC moved into another user's proxy admits nobody: that user's browser stays refused", async () => {
    const r = await client('stolen').req('GET', '/rest/1.1/jobs');
    assert.equal(r.status, 403);
    const { p, status } = await visit(outsider, '/');
    assert.equal(status, 403);
    await p.close();
  });

  it('ends the access when the window passes without a proxy, and prunes what is past it', async () => {
    const db = new Database(join(work, 'state', 'ceres.db'));
    try {
      // Eight days pass for the member's record (the service reads the table per request).
      db.prepare('UPDATE voms_seen SET seen_at = seen_at - ?').run(8 * DAY_MS);
      const { p, status } = await visit(member, '/');
      assert.equal(status, 403);
      await p.close();
      // Another member's proxy writes its own row and prunes the rows past the window.
      assert.equal((await client('outsiderAtlas').req('GET', '/rest/1.1/jobs')).status, 200);
      const rows = db.prepare('SELECT owner, seen_at AS seenAt FROM voms_seen').all() as { seenAt: number }[];
      assert.equal(rows.length, 1, JSON.stringify(rows));
      assert.ok(rows.every((r) => r.seenAt > Date.now() - DAY_MS));
      const admitted = await visit(outsider, '/');
      assert.equal(admitted.status, 200);
      await admitted.p.close();
    } finally {
      db.close();
      await client('atlas').action('kill', [jobId]);
    }
  });
});
