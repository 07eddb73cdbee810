/**
 * The job list in headless Chromium on the real service: jobs by name with exit code, end
 * and duration; search by name and id; sorting by the offered columns; the job page titled
 * with the job's name; a name holding markup shown as text; the administrator's owner
 * column and filter; and a clear 400 page for a malformed list address. One service and one
 * browser for the file. Skipped where no chromium is installed, unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, fitsWidth, launchChromium, userAndAdmin } from '../helpers/chromium.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';

const skip = chromiumSkip;
const EVIL = `<img src=x onerror="alert('name')"><script>alert(1)</script>`;

/** The list's rows as the page shows them: each row's cells' text. */
const rowsOf = (p: Page): Promise<string[][]> =>
  p
    .locator('#job-rows tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim() ?? '')));

describe('the job list in a real browser', { skip }, () => {
  let ceres: RunningCeres;
  let browser: Browser;
  let user: BrowserContext;
  let admin: BrowserContext;
  let client: Client;
  let bobClient: Client;
  const ids = new Map<string, string>();
  const dialogs: string[] = [];

  const job = (name: string, exit: number) =>
    `&(executable="/bin/sh")(arguments="-c" "exit ${exit}")(jobname="${name.replace(/"/g, '""')}")`;

  before(async () => {
    const stateDir = tempDir('state');
    const pkiDir = join(stateDir, 'pki');
    await initDevPki(pkiDir);
    await addDevUser(pkiDir, 'bob');
    const adm = await addDevUser(pkiDir, 'siteadmin');
    ceres = await startCeres({ stateDir, config: { web: { admins: [adm.dn] } } });
    client = Client.forUser(ceres);
    bobClient = Client.forUser(ceres, 'bob-proxy.pem');
    for (const [name, exit] of [
      ['zeta-render', 0],
      ['alpha-calibration', 3],
      [EVIL, 0],
    ] as const)
      ids.set(name, (await client.submit(job(name, exit)))[0].id as string);
    ids.set('bob-secret', (await bobClient.submit(job('bob-secret', 0)))[0].id as string);
    await client.waitFor(
      [...ids.entries()].filter(([n]) => n !== 'bob-secret').map(([, id]) => id),
      ['FINISHED', 'FAILED'],
    );
    await bobClient.waitFor([ids.get('bob-secret')!], ['FINISHED', 'FAILED']);
    const origin = new URL(ceres.url).origin;
    browser = await launchChromium();
    ({ user, admin } = await userAndAdmin(browser, origin, pkiDir, dialogs));
  });

  after(async () => {
    for (const c of [user, admin]) await c?.close();
    await browser?.close();
    await client?.close();
    await bobClient?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it('lists jobs by name with exit code, end time and duration; the job page is titled with the name', async () => {
    const p = await user.newPage();
    await p.goto(`${ceres.url}/web/jobs`);
    const rows = await rowsOf(p);
    const row = rows.find((r) => r[0] === 'alpha-calibration');
    assert.ok(row, JSON.stringify(rows));
    // Name, id, state, exit code, submitted, ended, duration.
    assert.equal(row[1], ids.get('alpha-calibration'));
    assert.equal(row[3], '3');
    assert.match(row[5] ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    assert.match(row[6] ?? '', /^\d+\.\d\d s$/);
    assert.equal(rows.find((r) => r[0] === 'zeta-render')?.[3], '0');
    await p.getByRole('link', { name: 'alpha-calibration' }).click();
    await p.getByRole('heading', { name: 'alpha-calibration' }).waitFor();
    assert.equal(await p.title(), 'alpha-calibration · Ceres');
    assert.match((await p.locator('main').textContent()) ?? '', new RegExp(ids.get('alpha-calibration')!));
    await p.close();
  });

  it('searches by part of the name and by the start of the id, only among my jobs', async () => {
    const p = await user.newPage();
    await p.goto(`${ceres.url}/web/jobs`);
    await p.getByLabel('Name or id').fill('CALIB');
    await p.getByRole('button', { name: 'Filter' }).click();
    await p.waitForURL(/q=CALIB/);
    assert.deepEqual(
      (await rowsOf(p)).map((r) => r[0]),
      ['alpha-calibration'],
    );
    await p.getByLabel('Name or id').fill(ids.get('zeta-render')!.slice(0, 12));
    await p.getByRole('button', { name: 'Filter' }).click();
    await p.getByRole('link', { name: 'zeta-render' }).waitFor();
    // Another user's job, by name or by id: nothing (as for a job that does not exist).
    for (const q of ['bob-secret', ids.get('bob-secret')!]) {
      await p.goto(`${ceres.url}/web/jobs?q=${encodeURIComponent(q)}`);
      assert.deepEqual(await rowsOf(p), [['No jobs.']], q);
    }
    await p.close();
  });

  it('sorts by name from the column header, and pages keep the order', async () => {
    const p = await user.newPage();
    await p.goto(`${ceres.url}/web/jobs`);
    await p.getByRole('link', { name: 'Name', exact: true }).click();
    await p.waitForURL(/sort=name/);
    assert.equal(
      await p
        .locator('th[aria-sort]')
        .textContent()
        .then((t) => t?.trim()),
      'Name',
    );
    const names = (await rowsOf(p)).map((r) => r[0]);
    assert.deepEqual(names, [EVIL, 'alpha-calibration', 'zeta-render'].sort());
    // The polled rows keep the order.
    const frag = await p.request.get(`${ceres.url}/web/jobs?sort=name&fragment=rows`);
    assert.ok((await frag.text()).indexOf('alpha-calibration') < (await frag.text()).indexOf('zeta-render'));
    await p.getByRole('link', { name: 'Ended', exact: true }).click();
    await p.waitForURL(/sort=ended/);
    assert.equal((await rowsOf(p)).length, 3);
    await p.close();
  });

  it('shows a name holding markup as text, in the list, the page and its title: no script runs', async () => {
    const p = await user.newPage();
    await p.goto(`${ceres.url}/web/jobs?q=${encodeURIComponent('<img')}`);
    await p.getByRole('link', { name: EVIL }).click();
    await p.getByRole('heading', { name: EVIL }).waitFor();
    assert.equal(await p.title(), `${EVIL} · Ceres`);
    assert.equal(await p.locator('main img').count(), 0);
    assert.deepEqual(dialogs, []);
    await p.close();
  });

  it('refuses a malformed list address with a 400 page that says what is wrong', async () => {
    const p = await user.newPage();
    for (const [q, re] of [
      ['sort=owner', /sort: one of submitted, ended, name/],
      ['after=nonsense', /after: not a page position/],
      ['user=%2FCN%3Dbob', /only site administrators/],
      [`q=${'x'.repeat(300)}`, /at most 200 characters/],
    ] as const) {
      const r = await p.goto(`${ceres.url}/web/jobs?${q}`);
      assert.equal(r?.status(), 400, q);
      assert.match((await p.getByRole('alert').textContent()) ?? '', re);
    }
    await p.close();
  });

  it("gives the administrator every owner's jobs with owner, account and VO, filtered by owner", async () => {
    const p = await admin.newPage();
    await p.goto(`${ceres.url}/web/jobs`);
    await p.getByRole('link', { name: 'bob-secret' }).waitFor();
    const heads = await p.locator('thead th').allTextContents();
    for (const h of ['Owner', 'Account', 'VO'])
      assert.ok(
        heads.some((t) => t.trim() === h),
        heads.join('|'),
      );
    const bobRow = (await rowsOf(p)).find((r) => r[0] === 'bob-secret');
    assert.match(bobRow?.[4] ?? '', /CN=bob/);
    await p.getByLabel('Owner').fill(bobRow?.[4] ?? '');
    await p.getByRole('button', { name: 'Filter' }).click();
    await p.waitForURL(/user=/);
    assert.deepEqual(
      (await rowsOf(p)).map((r) => r[0]),
      ['bob-secret'],
    );
    await p.goto(`${ceres.url}/web/jobs?vo=nosuchvo`);
    assert.deepEqual(await rowsOf(p), [['No jobs.']]);
    // Readable on a phone: the extra columns fold away, the form wraps.
    await p.setViewportSize({ width: 360, height: 740 });
    await p.goto(`${ceres.url}/web/jobs`);
    await fitsWidth(p);
    await p.close();
  });

  it('fits a phone and reaches the search with the keyboard', async () => {
    const p = await user.newPage();
    await p.setViewportSize({ width: 360, height: 740 });
    await p.goto(`${ceres.url}/web/jobs`);
    await fitsWidth(p);
    let reached = false;
    for (let i = 0; i < 20 && !reached; i++) {
      await p.keyboard.press('Tab');
      reached = await p.evaluate<boolean>("document.activeElement?.id === 'q'");
    }
    assert.ok(reached, 'Tab never reached the search field');
    await p.keyboard.type('zeta');
    await p.keyboard.press('Enter');
    await p.waitForURL(/q=zeta/);
    assert.deepEqual(
      (await rowsOf(p)).map((r) => r[0]),
      ['zeta-render'],
    );
    await p.close();
  });
});
