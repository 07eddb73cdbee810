/**
 * The site pages in headless Chromium on the real service: the info page (reached from the
 * navigation, every queue, the raw document a link away, names with markup as text, a
 * phone's width, dark mode) and the overview's pictures (images with accessible names,
 * filled by the service's series as jobs run and end, refreshed in place, the figures per
 * VO for the site administrator only, the windows, a bad window refused with a 400).
 * The series ticks every second here (web.siteSeriesTickSeconds). Skipped where no chromium
 * is installed, unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, fitsWidth, launchChromium, userAndAdmin } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';

const EVIL = `</text><img src=x onerror="alert('queue')"><script>alert(1)</script>`;

/** Reloads `p` at `url` until `check` holds (the series writes its buckets on its own clock). */
async function reloadUntil(p: Page, url: string, check: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 60_000;
  for (;;) {
    await p.goto(url);
    if (await check()) return;
    if (Date.now() > end) throw new Error(`not seen within 60 s: ${what}`);
    await p.waitForTimeout(500);
  }
}

describe('the site pages in a real browser', { skip: chromiumSkip }, () => {
  let ceres: RunningCeres;
  let browser: Browser;
  let user: BrowserContext;
  let admin: BrowserContext;
  let client: Client;
  const dialogs: string[] = [];

  before(async () => {
    const stateDir = tempDir('state');
    const pkiDir = join(stateDir, 'pki');
    await initDevPki(pkiDir);
    const adm = await addDevUser(pkiDir, 'siteadmin');
    ceres = await startCeres({
      stateDir,
      config: {
        web: { admins: [adm.dn], siteSeriesTickSeconds: 1 },
        cluster: {
          name: 'Test <b>site</b>',
          queues: [{ name: 'main', description: EVIL }, { name: 'short' }],
          runtimeEnvironments: [{ name: 'APPS/HEP/TOOL-1.0', description: EVIL }],
        },
      },
    });
    client = Client.forUser(ceres);
    const origin = new URL(ceres.url).origin;
    browser = await launchChromium();
    ({ user, admin } = await userAndAdmin(browser, origin, pkiDir, dialogs));
  });

  after(async () => {
    for (const c of [user, admin]) await c?.close();
    await browser?.close();
    await client?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it('shows the info document as a page from the navigation, with the raw document a link away', async () => {
    const p = await user.newPage();
    await p.goto(`${ceres.url}/`);
    await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Site information' }).click();
    await p.getByRole('heading', { level: 1, name: 'Test <b>site</b>' }).waitFor();
    const queues = p.getByRole('table', { name: /Queues and shares/ });
    for (const q of ['main', 'short']) await queues.getByRole('rowheader', { name: q, exact: true }).waitFor();
    await p
      .getByRole('table', { name: /Runtime environments/ })
      .getByRole('rowheader', { name: 'APPS/HEP/TOOL' })
      .waitFor();
    await p.getByRole('heading', { name: 'Policies' }).waitFor();
    await p.getByText('All published values of main').click();
    await p.getByText(EVIL).first().waitFor();
    assert.equal(await p.locator('main img, main script, main b').count(), 0, 'names are text');
    await p.getByRole('link', { name: 'the raw info document' }).click();
    await p.waitForURL(/\/rest\/1\.1\/info$/);
    assert.match(await p.content(), /ComputingService/);
    assert.deepEqual(dialogs, []);
    await p.close();
  });

  it('fits a phone, in light and dark', async () => {
    const p = await user.newPage();
    await p.setViewportSize({ width: 375, height: 740 });
    for (const path of ['/web/info', '/']) {
      await p.goto(`${ceres.url}${path}`);
      await fitsWidth(p);
    }
    await p.emulateMedia({ colorScheme: 'dark' });
    await p.goto(`${ceres.url}/`);
    const colours = await p.evaluate<[string, string, string]>(
      `[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color,
        getComputedStyle(document.querySelector('figure.chart text')).fill]`,
    );
    assert.deepEqual(colours.slice(0, 2), ['rgb(13, 17, 23)', 'rgb(230, 237, 243)']);
    assert.notEqual(colours[2], 'rgb(85, 85, 85)', 'the axis text takes the dark palette');
    await p.close();
  });

  it('draws the load from the series as jobs end, refreshes the pictures in place, and keeps per-VO figures for admins', async () => {
    const [done] = await client.submit('&(executable="/bin/sh")(arguments="-c" "exit 0")(jobname="quick")');
    const [long] = await client.submit('&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="long")');
    await client.waitFor([done.id as string], ['FINISHED']);
    const p = await user.newPage();
    const ended = () => p.getByRole('img', { name: /^Jobs ended \(throughput\)/ });
    await reloadUntil(
      p,
      `${ceres.url}/`,
      async () => /FINISHED: highest 1/.test((await p.locator('#pic-ended desc').textContent()) ?? ''),
      'the finished job in the throughput picture',
    );
    await ended().waitFor();
    for (const name of ['Active jobs by state', 'Active jobs per queue', 'Staging', 'Wait time', 'Run time'])
      await p.getByRole('img', { name: new RegExp(`^${name.replace(/[()]/g, '\\$&')}`) }).waitFor();
    assert.equal(await p.locator('#pic-vo').count(), 0, 'a user sees no figures per VO');
    await p.getByText('Figures per VO and route are shown to site administrators').waitFor();
    // The figures as a table, for those who do not see the picture.
    await p.getByText(/Figures of “Jobs ended \(throughput\)” as a table/).click();
    await p.getByRole('columnheader', { name: 'FINISHED' }).waitFor();
    // Refreshed in place: the section is fetched again without a reload.
    const refreshed = await p.waitForRequest(/\/web\/site-pictures\?window=6h/, { timeout: 60_000 });
    assert.equal(refreshed.method(), 'GET');
    // The windows.
    await p.getByRole('link', { name: 'last 60 days' }).click();
    await p.waitForURL(/window=60d/);
    await p.getByRole('heading', { name: 'Site load, last 60 days' }).waitFor();
    const bad = await p.goto(`${ceres.url}/?window=%3Cx%3E`);
    assert.equal(bad?.status(), 400);
    await p.getByText(/window: one of 6h, 48h, 60d/).waitFor();
    await p.close();

    const a = await admin.newPage();
    await reloadUntil(a, `${ceres.url}/`, async () => (await a.locator('#pic-vo').count()) > 0, 'the VO picture');
    await a.getByRole('img', { name: /^Active jobs per VO/ }).waitFor();
    await client.action('kill', [long.id as string]);
    await a.close();
    assert.deepEqual(dialogs, []);
  });
});
