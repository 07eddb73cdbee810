/**
 * Two users and a site administrator in headless Chromium, each in their own browser
 * context with their own client certificate (dev PKI users made with `addDevUser`):
 * each sees only their own jobs and cannot open, read or act on the other's (direct
 * URLs, forged posts with their own or the other's request token: the same 404 as a
 * missing job); the administrator (config web.admins) sees both and may kill. Also the
 * upload form with JavaScript disabled, and a finished job's history and usage.
 * Skipped where no chromium is installed, unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { certificateContext, chromiumSkip, fitsWidth, launchChromium } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';

const skip = chromiumSkip;

const tokenOf = async (p: Page): Promise<string> => (await p.locator('input[name=csrf]').first().inputValue()) ?? '';

describe('two users and an administrator in a real browser', { skip }, () => {
  let ceres: RunningCeres;
  let browser: Browser;
  let alice: BrowserContext;
  let bob: BrowserContext;
  let admin: BrowserContext;
  let aliceNoJs: BrowserContext;
  let aliceRest: Client;
  let bobRest: Client;
  let origin: string;
  let aliceJob: string;
  let bobJob: string;
  const long = '&(executable="/bin/sh")(arguments="-c" "echo started > out.txt; sleep 600")(stdout="so.txt")';

  before(async () => {
    // The PKI is made before the service starts, so the administrator's DN can be configured.
    const stateDir = tempDir('state');
    const pkiDir = join(stateDir, 'pki');
    const pki = await initDevPki(pkiDir);
    await addDevUser(pkiDir, 'bob');
    const adm = await addDevUser(pkiDir, 'siteadmin');
    ceres = await startCeres({ stateDir, config: { web: { admins: [adm.dn] }, sessions: { maxFileBytes: 4096 } } });
    assert.equal(ceres.pkiDir, pkiDir);
    assert.notEqual(pki.userDn, adm.dn);
    origin = new URL(ceres.url).origin;
    aliceRest = Client.forUser(ceres);
    bobRest = Client.forUser(ceres, 'bob-proxy.pem');
    browser = await launchChromium();
    const ctxFor = (cert: string, key: string, javaScriptEnabled = true) =>
      certificateContext(browser, origin, pkiDir, { cert, key }, javaScriptEnabled);
    alice = await ctxFor('usercert.pem', 'userkey.pem');
    bob = await ctxFor('bob-cert.pem', 'bob-key.pem');
    admin = await ctxFor('siteadmin-cert.pem', 'siteadmin-key.pem');
    aliceNoJs = await ctxFor('usercert.pem', 'userkey.pem', false);
    aliceJob = (await aliceRest.submit(long))[0].id as string;
    bobJob = (await bobRest.submit(long))[0].id as string;
    await aliceRest.waitFor([aliceJob], ['RUNNING']);
    await bobRest.waitFor([bobJob], ['RUNNING']);
  });

  after(async () => {
    await aliceRest?.action('kill', [aliceJob]).catch(() => undefined);
    await bobRest?.action('kill', [bobJob]).catch(() => undefined);
    for (const c of [alice, bob, admin, aliceNoJs]) await c?.close();
    await browser?.close();
    await aliceRest?.close();
    await bobRest?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it('shows each user only their own jobs; the administrator sees both, with their owners', async () => {
    for (const [ctx, mine, theirs] of [
      [alice, aliceJob, bobJob],
      [bob, bobJob, aliceJob],
    ] as const) {
      const p = await ctx.newPage();
      await p.goto(`${ceres.url}/web/jobs`);
      await p.getByRole('heading', { name: 'My jobs' }).waitFor();
      await p.getByRole('link', { name: mine }).waitFor();
      assert.equal(await p.getByRole('link', { name: theirs }).count(), 0);
      // The polled rows too.
      const rows = await p.request.get(`${ceres.url}/web/jobs?fragment=rows`);
      assert.doesNotMatch(await rows.text(), new RegExp(theirs));
      await p.close();
    }
    const p = await admin.newPage();
    await p.goto(`${ceres.url}/web/jobs`);
    await p.getByRole('heading', { name: 'All jobs' }).waitFor();
    await p.getByRole('link', { name: aliceJob }).waitFor();
    await p.getByRole('link', { name: bobJob }).waitFor();
    assert.match((await p.getByRole('row', { name: new RegExp(bobJob) }).textContent()) ?? '', /CN=bob/);
    assert.match((await p.locator('header').textContent()) ?? '', /site administrator/);
    // The owner column does not push a phone's page sideways.
    await p.setViewportSize({ width: 360, height: 740 });
    await p.reload();
    await fitsWidth(p);
    await p.close();
  });

  it("cannot open the other user's job page, status, files or diagnose: the 404 of a missing job", async () => {
    const p = await alice.newPage();
    const missing = await p.request.get(`${ceres.url}/web/jobs/${'a'.repeat(bobJob.length)}`);
    assert.equal(missing.status(), 404);
    const missingText = (await missing.text()).replace(/a{10,}/g, 'ID');
    for (const path of [
      `/web/jobs/${bobJob}`,
      `/web/jobs/${bobJob}/status`,
      `/web/jobs/${bobJob}/files/out.txt`,
      `/web/jobs/${bobJob}?dir=`,
    ]) {
      const r = await p.request.get(`${ceres.url}${path}`);
      assert.equal(r.status(), 404, path);
      if (path === `/web/jobs/${bobJob}`) assert.equal((await r.text()).replace(bobJob, 'ID'), missingText);
    }
    const page = await p.goto(`${ceres.url}/web/jobs/${bobJob}`);
    assert.equal(page?.status(), 404);
    await p.getByRole('heading', { name: 'Not found' }).waitFor();
    assert.equal((await p.request.get(`${ceres.url}/rest/1.1/jobs/${bobJob}/diagnose/errors`)).status(), 404);
    await p.close();
  });

  it("cannot act on the other's job with its own or the other's request token", async () => {
    const a = await alice.newPage();
    await a.goto(`${ceres.url}/web/jobs/${aliceJob}`);
    const aliceToken = await tokenOf(a);
    const b = await bob.newPage();
    await b.goto(`${ceres.url}/web/jobs/${bobJob}`);
    const bobToken = await tokenOf(b);
    for (const csrf of [aliceToken, bobToken]) {
      for (const action of ['kill', 'clean', 'restart']) {
        const r = await a.request.post(`${ceres.url}/web/jobs/${bobJob}/${action}`, {
          form: { csrf },
          headers: { origin },
        });
        assert.equal(r.status(), 404, `${action} with a token`);
      }
      const del = await a.request.post(`${ceres.url}/web/jobs/${bobJob}/files-delete`, {
        form: { csrf, path: 'out.txt' },
        headers: { origin },
      });
      assert.equal(del.status(), 404);
      const up = await a.request.post(`${ceres.url}/web/jobs/${bobJob}/upload`, {
        multipart: { csrf, file: { name: 'evil.txt', mimeType: 'text/plain', buffer: Buffer.from('x') } },
        headers: { origin },
      });
      assert.equal(up.status(), 404);
      const put = await a.request.put(`${ceres.url}/web/jobs/${bobJob}/upload?name=evil.txt`, {
        data: 'x',
        headers: { origin, 'x-ceres-csrf': csrf },
      });
      assert.equal(put.status(), 404);
    }
    // Bob's token does not work on Alice's own job either: it is bound to Bob's identity.
    const foreign = await a.request.post(`${ceres.url}/web/jobs/${aliceJob}/kill`, {
      form: { csrf: bobToken },
      headers: { origin },
    });
    assert.equal(foreign.status(), 403);
    assert.equal((await bobRest.status([bobJob])).get(bobJob), 'RUNNING');
    assert.equal((await aliceRest.status([aliceJob])).get(aliceJob), 'RUNNING');
    const bobFiles = await bobRest.req('GET', `/rest/1.1/jobs/${bobJob}/session/`, undefined, { accept: '*/*' });
    assert.doesNotMatch(bobFiles.text, /evil\.txt/);
    await a.close();
    await b.close();
  });

  it("lets the administrator read another user's job and kill it, but not change its files or restart it", async () => {
    const p = await admin.newPage();
    await p.goto(`${ceres.url}/web/jobs/${bobJob}`);
    await p.getByText('Administrator view').waitFor();
    await p.getByRole('heading', { name: 'State history' }).waitFor();
    await p.getByRole('cell', { name: 'out.txt', exact: true }).waitFor();
    assert.equal(await p.getByRole('button', { name: 'Restart' }).count(), 0);
    assert.equal(await p.getByLabel(/Upload a file/).count(), 0);
    assert.equal(await p.getByRole('button', { name: /Delete out.txt/ }).count(), 0);
    const dl = await p.request.get(`${ceres.url}/web/jobs/${bobJob}/files/out.txt`);
    assert.equal(dl.status(), 200);
    assert.equal((await dl.text()).trim(), 'started');
    const csrf = await tokenOf(p);
    const restart = await p.request.post(`${ceres.url}/web/jobs/${bobJob}/restart`, {
      form: { csrf },
      headers: { origin },
    });
    assert.equal(restart.status(), 403);
    const del = await p.request.post(`${ceres.url}/web/jobs/${bobJob}/files-delete`, {
      form: { csrf, path: 'out.txt' },
      headers: { origin },
    });
    assert.equal(del.status(), 403);
    // Cross-site checks hold for the administrator too.
    const cross = await p.request.post(`${ceres.url}/web/jobs/${bobJob}/kill`, {
      form: { csrf },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(cross.status(), 403);
    assert.equal((await bobRest.status([bobJob])).get(bobJob), 'RUNNING');
    await p.getByRole('button', { name: 'Kill' }).click();
    await p.getByText('Done: kill.').waitFor();
    await untilValue('bob job killed', async () =>
      (await bobRest.status([bobJob])).get(bobJob) === 'KILLED' ? true : undefined,
    );
    assert.equal((await aliceRest.status([aliceJob])).get(aliceJob), 'RUNNING');
    await p.close();
  });

  it('uploads with JavaScript disabled: a plain form post, a clear page on refusal, no temp file left', async () => {
    const p = await aliceNoJs.newPage();
    await p.goto(`${ceres.url}/web/jobs/${aliceJob}`);
    // The keyboard reaches the file chooser and then the Upload button.
    let at = '';
    for (let i = 0; i < 60 && at !== 'upload-file'; i++) {
      await p.keyboard.press('Tab');
      at = await p.evaluate<string>("document.activeElement?.id ?? ''");
    }
    assert.equal(at, 'upload-file', 'Tab never reached the file chooser');
    await p.keyboard.press('Tab');
    assert.equal(await p.evaluate<string>("document.activeElement?.textContent?.trim() ?? ''"), 'Upload');
    await p
      .getByLabel(/Upload a file/)
      .setInputFiles({ name: 'nojs.txt', mimeType: 'text/plain', buffer: Buffer.from('no script\n') });
    await p.getByRole('button', { name: 'Upload', exact: true }).click();
    await p.getByText('Done: uploaded.').waitFor();
    await p.getByRole('cell', { name: 'nojs.txt', exact: true }).waitFor();
    const got = await aliceRest.req('GET', `/rest/1.1/jobs/${aliceJob}/session/nojs.txt`, undefined, { accept: '*/*' });
    assert.equal(got.text, 'no script\n');
    // Too large: the limit's message on an error page, nothing stored.
    await p
      .getByLabel(/Upload a file/)
      .setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(5000) });
    await p.getByRole('button', { name: 'Upload', exact: true }).click();
    await p
      .getByRole('alert')
      .filter({ hasText: /too large/i })
      .waitFor();
    assert.equal(
      (await aliceRest.req('GET', `/rest/1.1/jobs/${aliceJob}/session/big.bin`, undefined, { accept: '*/*' })).status,
      404,
    );
    const temps = (function walk(d: string): string[] {
      return readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(d, e.name)) : e.name.startsWith('.ceres-upload.') ? [e.name] : [],
      );
    })(ceres.stateDir);
    assert.deepEqual(temps, []);
    await p.close();
  });

  it("shows a finished job's state history with times, its usage and its messages", async () => {
    const [j] = await aliceRest.submit('&(executable="/bin/sh")(arguments="-c" "exit 3")');
    const id = j.id as string;
    await aliceRest.waitFor([id], ['FAILED', 'FINISHED']);
    const p = await alice.newPage();
    await p.goto(`${ceres.url}/web/jobs/${id}`);
    const history = p.locator('ol.timeline');
    await history.waitFor();
    const items = await history.locator('li').allTextContents();
    assert.ok(items.length >= 4, items.join('\n'));
    assert.match(items[0] ?? '', /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\s+ACCEPTED\s+submitted/);
    assert.match(items.join('\n'), /INLRMS/);
    assert.match(items[items.length - 1] ?? '', /FINISHED|FINISHING/);
    const usage = (await p.locator('#usage').textContent()) ?? '';
    assert.match(usage, /Exit code\s*3/);
    assert.match(usage, /Wall time/);
    assert.match(usage, /Maximum memory/);
    // Landmarks and headings of the new sections; a phone's width without horizontal scroll.
    for (const h of ['State history', 'Usage', 'Messages'])
      await p.getByRole('heading', { name: h, level: 2 }).waitFor();
    assert.equal(await p.getByRole('main').count(), 1);
    await p.setViewportSize({ width: 360, height: 740 });
    await p.reload();
    await fitsWidth(p);
    await p.close();
  });
});
