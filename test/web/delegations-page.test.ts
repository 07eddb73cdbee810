/**
 * The delegations page in headless Chromium on the real service: each delegation with the
 * jobs that use it (by name, linked, with their state) and its expiry, highlighted within a
 * day; another user's jobs never listed. Skipped where no chromium is installed, unless
 * CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext } from 'playwright-core';
import { certificateContext, chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { delegateUserProxy } from '../helpers/user-delegation.js';

describe('the delegations page in a real browser', { skip: chromiumSkip }, () => {
  let ceres: RunningCeres;
  let browser: Browser;
  let ctx: BrowserContext;
  let client: Client;

  before(async () => {
    ceres = await startCeres();
    client = Client.forUser(ceres);
    browser = await launchChromium();
    ctx = await certificateContext(browser, new URL(ceres.url).origin, ceres.pkiDir, {
      cert: 'usercert.pem',
      key: 'userkey.pem',
    });
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

  const delegate = () => delegateUserProxy(client, ceres.pkiDir);

  it('lists the jobs that use each delegation, by name, and highlights an expiry within a day', async () => {
    const used = await delegate();
    const unused = await delegate();
    const [job] = await client.submit(
      `&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="<b>uses-it</b>")(delegationid="${used}")`,
    );
    try {
      const p = await ctx.newPage();
      await p.goto(`${ceres.url}/web/delegations`);
      const row = p.getByRole('row', { name: new RegExp(used) });
      await row.getByRole('link', { name: '<b>uses-it</b>' }).waitFor();
      assert.equal(await row.locator('b').count(), 0, 'the name is text');
      assert.match((await p.getByRole('row', { name: new RegExp(unused) }).textContent()) ?? '', /no jobs/);
      const cell = row.locator('td').nth(2);
      const text = (await cell.textContent()) ?? '';
      const m = /\(in (\d+) h\)|\(expires within the hour\)|\(expired\)/.exec(text);
      assert.ok(m, text);
      const near = m[1] === undefined || Number(m[1]) < 24;
      assert.equal(/\bnear\b/.test((await cell.getAttribute('class')) ?? ''), near, text);
      await row.getByRole('link', { name: '<b>uses-it</b>' }).click();
      await p.getByRole('heading', { name: '<b>uses-it</b>' }).waitFor();
      await p.close();
    } finally {
      await client.action('kill', [job.id as string]);
    }
  });
});
