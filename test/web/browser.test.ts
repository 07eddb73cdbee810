/**
 * The web interface driven as a person would, in headless Chromium (playwright-core with
 * Debian's chromium) presenting the dev PKI's user certificate to the real service.
 * Skipped with a message where no chromium is installed, unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:https';
import type { Browser, BrowserContext } from 'playwright-core';
import { attackerSite, certificateContext, chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';
import { delegateUserProxy } from '../helpers/user-delegation.js';

const skip = chromiumSkip;

describe('web interface in a real browser', { skip }, () => {
  let ceres: RunningCeres;
  let browser: Browser;
  let ctx: BrowserContext;
  let client: Client;
  let attacker: Server;
  let attackerUrl: string;
  let origin: string;
  const long = '&(executable="/bin/sh")(arguments="-c" "echo started; sleep 600")(stdout="out.txt")(stderr="err.txt")';

  before(async () => {
    ceres = await startCeres({ config: { sessions: { maxFileBytes: 4096 } } });
    client = Client.forUser(ceres);
    origin = new URL(ceres.url).origin;
    browser = await launchChromium();
    ctx = await certificateContext(browser, origin, ceres.pkiDir, { cert: 'usercert.pem', key: 'userkey.pem' });
    // The attacker: another https origin (other port) whose page posts to Ceres.
    ({ server: attacker, url: attackerUrl } = await attackerSite(ceres.pkiDir, (u) => {
      const target = u.searchParams.get('t') ?? '';
      // enc=multipart: the script-free upload form, forged (a text field named like the file).
      const enc = u.searchParams.get('enc') === 'multipart' ? ' enctype="multipart/form-data"' : '';
      return `<!DOCTYPE html><form id="f" method="post" action="${target}"${enc}><input name="csrf" value="forged"><input name="dir" value=""><textarea name="file">planted</textarea></form>
<script>fetch(${JSON.stringify(target)}, {method:'POST', mode:'no-cors', credentials:'include', body:'csrf=forged', headers:{'content-type':'application/x-www-form-urlencoded'}}).finally(() => document.getElementById('f').submit());</script>`;
    }));
  });

  after(async () => {
    await ctx?.close();
    await browser?.close();
    attacker?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it('shows the overview, the job list and a job whose state changes live; kills it from its page', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    const page = await ctx.newPage();
    await page.goto(`${ceres.url}/`);
    assert.equal(await page.locator('h1').textContent(), 'Cluster overview');
    await page.getByRole('link', { name: 'My jobs' }).click();
    await page.getByRole('link', { name: id }).waitFor();
    await page.getByLabel('State').selectOption('RUNNING');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page
      .getByRole('link', { name: id })
      .waitFor({ timeout: 60_000 })
      .catch(async () => {
        await page.reload();
        await page.getByRole('link', { name: id }).waitFor({ timeout: 60_000 });
      });
    await page.getByRole('link', { name: id }).click();
    await page.locator('#job-state', { hasText: 'RUNNING' }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Kill' }).click();
    await page.getByText('Done: kill.').waitFor();
    // The polled fragment shows the end without a reload.
    await page.locator('#job-state', { hasText: 'KILLED' }).waitFor({ timeout: 60_000 });
    const headers = (await page.request.get(`${ceres.url}/web/jobs/${id}`)).headers();
    assert.match(headers['content-security-policy'] ?? '', /default-src 'self'.*frame-ancestors 'none'/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    await page.close();
  });

  it('uploads and downloads a file; a job file named x.html is an attachment that never runs here', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    const page = await ctx.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${ceres.url}/web/jobs/${id}`);
    await page
      .getByLabel('Upload a file')
      .setInputFiles({ name: 'x.html', mimeType: 'text/html', buffer: Buffer.from('<script>alert("xss")</script>') });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('cell', { name: 'x.html', exact: true }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: /Download x.html/ }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'x.html');
    const r = await page.request.get(`${ceres.url}/web/jobs/${id}/files/x.html`);
    assert.match(r.headers()['content-disposition'] ?? '', /^attachment/);
    assert.equal(r.headers()['content-type'], 'application/octet-stream');
    assert.match(r.headers()['content-security-policy'] ?? '', /sandbox/);
    assert.deepEqual(dialogs, []);
    // Too large: a clear message, nothing stored.
    await page
      .getByLabel('Upload a file')
      .setInputFiles({ name: 'big.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(5000) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByText(/too large/).waitFor();
    await client.action('kill', [id]);
    await page.close();
  });

  it('refuses a cross-site form post and fetch: the job is untouched', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    const page = await ctx.newPage();
    await page.goto(`${attackerUrl}?t=${encodeURIComponent(`${ceres.url}/web/jobs/${id}/kill`)}`);
    await page.waitForURL(/\/kill$/, { timeout: 20_000 });
    assert.match((await page.content()) ?? '', /Cross-site request refused|refused/i);
    const states = await client.status([id]);
    assert.notEqual(states.get(id), 'KILLED');
    assert.equal(
      (
        await client.req('POST', '/rest/1.1/jobs?action=status', JSON.stringify({ job: [{ id }] }), {
          'content-type': 'application/json',
        })
      ).json().job.state === 'KILLING',
      false,
    );
    await client.action('kill', [id]);
    await page.close();
  });

  it('refuses a cross-site multipart upload form: nothing is written', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    const page = await ctx.newPage();
    try {
      await page.goto(`${attackerUrl}?enc=multipart&t=${encodeURIComponent(`${ceres.url}/web/jobs/${id}/upload`)}`);
      await page.waitForURL(/\/upload$/, { timeout: 20_000 });
      assert.match((await page.content()) ?? '', /Cross-site request refused|refused/i);
      const listing = await client.req('GET', `/rest/1.1/jobs/${id}/session/`, undefined, { accept: '*/*' });
      assert.doesNotMatch(listing.text, /planted|session\/file"/);
    } finally {
      await client.action('kill', [id]);
      await page.close();
    }
  });

  it('answers a bad or missing request token with a clear error, another id with a 404 page', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    const page = await ctx.newPage();
    await page.goto(`${ceres.url}/web/jobs/${id}`);
    const expired = await page.request.post(`${ceres.url}/web/jobs/${id}/kill`, {
      form: { csrf: `1000.${'A'.repeat(43)}` },
      headers: { origin },
    });
    assert.equal(expired.status(), 403);
    const missing = await page.request.post(`${ceres.url}/web/jobs/${id}/kill`, { form: {}, headers: { origin } });
    assert.equal(missing.status(), 403);
    assert.match(await missing.text(), /reload the page/);
    const r = await page.goto(`${ceres.url}/web/jobs/aaaaaaaaaaaaaaaaaaaaaaaaaa`);
    assert.equal(r?.status(), 404);
    await page.getByRole('heading', { name: 'Not found' }).waitFor();
    assert.notEqual((await client.status([id])).get(id), 'KILLED');
    await client.action('kill', [id]);
    await page.close();
  });

  it('reaches the actions with the keyboard and fits a phone screen', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    const page = await ctx.newPage();
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(`${ceres.url}/web/jobs/${id}`);
    const overflow = await page.evaluate<number>(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate<boolean>("document.activeElement?.textContent?.trim() === 'Kill'");
    }
    assert.ok(reached, 'Tab never reached the Kill button');
    await page.keyboard.press('Enter');
    await page.getByText('Done: kill.').waitFor();
    await untilValue(
      'killed',
      async () => ((await client.status([id])).get(id) === 'KILLED' ? true : undefined),
      60_000,
    );
    await page.close();
  });

  it('lists a delegation with its expiry and deletes it from the page', async () => {
    const id = await delegateUserProxy(client, ceres.pkiDir);
    const page = await ctx.newPage();
    await page.goto(`${ceres.url}/`);
    await page.getByRole('link', { name: 'Delegations' }).click();
    const row = page.getByRole('row', { name: new RegExp(id) });
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
    await page.getByRole('button', { name: `Delete delegation ${id}` }).click();
    await page.getByText('Delegation deleted.').waitFor();
    assert.equal(await page.getByRole('row', { name: new RegExp(id) }).count(), 0);
    assert.doesNotMatch((await client.req('GET', '/rest/1.1/delegations')).text, new RegExp(id));
    await page.close();
  });

  it('puts the security headers on the REST tree HTML renderings and error pages too', async () => {
    const page = await ctx.newPage();
    for (const path of ['/rest/1.1/info', '/rest/1.1/jobs', '/rest/1.1/nothing']) {
      const r = await page.request.get(`${ceres.url}${path}`);
      assert.match(r.headers()['content-type'] ?? '', /text\/html/, path);
      assert.match(r.headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/, path);
    }
    await page.close();
  });

  it('leaves the REST answers to programs untouched (JSON)', async () => {
    const r = await client.req('GET', '/rest/1.1/jobs');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /json/);
    assert.ok(Array.isArray(r.json().job) || typeof r.json() === 'object');
  });
});
