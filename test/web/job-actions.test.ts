/**
 * The job page offers only the actions that apply, in headless Chromium on the real service:
 * Kill while the job can be killed, Restart where the state machine allows it (each with why
 * not otherwise), Clean behind a confirmation that says it deletes the files, and diagnose
 * links only for files that exist. One service and one browser for the file. Skipped where no
 * chromium is installed, unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { certificateContext, chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const skip = chromiumSkip;

describe('actions that apply, in a real browser', { skip }, () => {
  let ceres: RunningCeres;
  let browser: Browser;
  let ctx: BrowserContext;
  let client: Client;
  let origin: string;
  const long = '&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="long")';
  const failing = (rerun: number) =>
    `&(executable="/bin/sh")(arguments="-c" "exit 3")(jobname="fails")(rerun=${rerun})`;

  before(async () => {
    ceres = await startCeres();
    client = Client.forUser(ceres);
    origin = new URL(ceres.url).origin;
    browser = await launchChromium();
    ctx = await certificateContext(browser, origin, ceres.pkiDir, { cert: 'usercert.pem', key: 'userkey.pem' });
  });
  after(async () => {
    await ctx?.close();
    await browser?.close();
    await client?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  const buttons = async (p: Page) =>
    (await p.locator('main .job-actions button:visible').allTextContents()).map((t) => t.trim());

  it('offers Kill but not Restart while a job runs, and neither once it is killed', async () => {
    const [job] = await client.submit(long);
    const id = job.id as string;
    await client.waitFor([id], ['RUNNING']);
    const p = await ctx.newPage();
    await p.goto(`${ceres.url}/web/jobs/${id}`);
    assert.deepEqual(await buttons(p), ['Kill']);
    assert.match((await p.locator('#not-offered').textContent()) ?? '', /Restart: the job has not finished yet/);
    await p.getByRole('button', { name: 'Kill' }).click();
    await p.getByText('Done: kill.').waitFor();
    // Until it has ended the kill is requested, not offered again.
    assert.equal(await p.getByRole('button', { name: 'Kill' }).count(), 0);
    await client.waitFor([id], ['KILLED']);
    await p.reload();
    assert.equal(await p.getByRole('button', { name: 'Kill' }).count(), 0);
    assert.match((await p.locator('#not-offered').textContent()) ?? '', /Kill: /);
    await p.close();
  });

  it('offers Restart for a failed job with restarts left, not without; never Kill', async () => {
    const [a] = await client.submit(failing(1));
    const [b] = await client.submit(failing(0));
    await client.waitFor([a.id, b.id], ['FAILED']);
    const p = await ctx.newPage();
    await p.goto(`${ceres.url}/web/jobs/${b.id}`);
    assert.deepEqual(await buttons(p), []);
    assert.match((await p.locator('#not-offered').textContent()) ?? '', /Restart: No more restarts allowed/);
    await p.goto(`${ceres.url}/web/jobs/${a.id}`);
    assert.deepEqual(await buttons(p), ['Restart']);
    await p.getByRole('button', { name: 'Restart' }).click();
    await p.getByText('Done: restart.').waitFor();
    await p.close();
  });

  it('asks before Clean and says that it deletes the files; a post of an action that does not apply is a clear 4xx', async () => {
    const [job] = await client.submit(failing(0));
    await client.waitFor([job.id], ['FAILED']);
    const p = await ctx.newPage();
    await p.goto(`${ceres.url}/web/jobs/${job.id}`);
    const confirm = p.getByRole('button', { name: 'Clean: delete the job and its files' });
    assert.equal(await confirm.isVisible(), false, 'the clean button is behind the disclosure');
    // A forged kill of the ended job, with a valid token: refused with the reason, not a 5xx.
    const token = await p.locator('input[name=csrf]').first().inputValue();
    const r = await p.request.post(`${ceres.url}/web/jobs/${job.id}/kill`, {
      form: { csrf: token },
      headers: { origin },
    });
    assert.equal(r.status(), 400);
    assert.match(await r.text(), /kill: .*(ended|finished)/i);
    await p.getByText('Clean…').click();
    await p.getByText(/deletes the job's session directory/).waitFor();
    await confirm.click();
    await p.getByText('Done: clean.').waitFor();
    await p.close();
  });

  it('links only the diagnose files that exist, each of which answers', async () => {
    const [job] = await client.submit(failing(0));
    await client.waitFor([job.id], ['FAILED']);
    const p = await ctx.newPage();
    await p.goto(`${ceres.url}/web/jobs/${job.id}`);
    const links = await p
      .locator('section[aria-labelledby=dg] a')
      .evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
    assert.ok(
      links.some((l) => l.endsWith('/errors')),
      links.join(' '),
    );
    for (const l of links) assert.equal((await p.request.get(`${origin}${l}`)).status(), 200, l);
    await p.close();
  });
});
