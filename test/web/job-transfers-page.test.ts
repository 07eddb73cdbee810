/**
 * The job page's data transfers in headless Chromium on the real service: a job staging a
 * root:// input from and a root:// output to a real xrootd server (started once for this
 * file) shows each with its URL, size, time and rate; a job without transfers says none
 * were recorded; a password in a URL is shown redacted. Skipped where Chromium,
 * xrootd or gfal2 is missing (or not root), unless CERES_REQUIRE_BROWSER=1 / CERES_REQUIRE_GFAL2=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { BrowserContext } from 'playwright-core';
import { chromiumSkip, startBrowserService, type BrowserService } from '../helpers/chromium.js';
import type { Client, RunningCeres } from '../helpers/service.js';
import { XrootdServer, xrootdAvailable } from '../staging/helpers/xrootd.js';

const available = xrootdAvailable();
if (!available && process.env['CERES_REQUIRE_GFAL2'] === '1')
  throw new Error('xrootd, gfal2 and root are needed here (CERES_REQUIRE_GFAL2=1)');

const FINAL = ['FINISHED', 'FAILED', 'KILLED'];

describe(
  'data transfers on the job page in a real browser',
  { skip: chromiumSkip || (!available && 'needs root, xrootd-server and python3-gfal2') },
  () => {
    let xrd: XrootdServer;
    let web: BrowserService;
    let ceres: RunningCeres;
    let client: Client;
    let ctx: BrowserContext;
    const input = randomBytes(300_000);

    before(async () => {
      xrd = await XrootdServer.start();
      await xrd.put('in.bin', input);
      web = await startBrowserService({});
      ({ ceres, client, ctx } = web);
    });
    after(async () => {
      await web?.close();
      await xrd?.stop();
    });

    const run = async (xrsl: string): Promise<string> => {
      const [item] = await client.submit(xrsl);
      const st = await client.waitFor([item.id], FINAL, 120_000);
      assert.equal(st.get(item.id), 'FINISHED');
      return item.id as string;
    };

    it('lists the input and the output with URL (its password left out), size, time and rate, and the totals', async () => {
      // xrootd ignores the password here; the page must show it redacted.
      const secretUrl = xrd.url('in.bin').replace('root://', 'root://alice:s3cr3tpw@');
      const id = await run(`&(executable="/bin/sh")(arguments="-c" "head -c 1000 in.bin > out.bin")
        (inputfiles=("in.bin" "${secretUrl}"))(outputfiles=("out.bin" "${xrd.url('page/out.bin')}"))`);
      const p = await ctx.newPage();
      await p.goto(`${ceres.url}/web/jobs/${id}`);
      await p.getByRole('heading', { name: 'Data transfers' }).waitFor();
      const table = p.locator('#transfers');
      const inRow = table.getByRole('row', { name: /Input/ });
      const outRow = table.getByRole('row', { name: /Output/ });
      const inText = (await inRow.textContent()) ?? '';
      assert.ok(inText.includes(xrd.url('in.bin').replace('root://', 'root://alice:***@')), inText);
      assert.doesNotMatch((await p.locator('section[aria-labelledby="tr"]').textContent()) ?? '', /s3cr3tpw/);
      assert.match(inText, /300000 bytes \(293\.0 KiB\)/);
      assert.match(inText, /(under 1 s\s*at least 293\.0 KiB\/s)|(\d\.\d\d s\s*[\d.]+ (KiB|MiB|bytes)\/s)/);
      const outText = (await outRow.textContent()) ?? '';
      assert.ok(outText.includes(xrd.url('page/out.bin')), outText);
      assert.match(outText, /1000 bytes/);
      assert.match((await table.locator('caption').textContent()) ?? '', /In: 300000 bytes.*out: 1000 bytes/);
      await p.close();
    });

    it('says none were recorded for a job without transfers, and for one whose input failed', async () => {
      const plain = await run(`&(executable="/bin/true")`);
      const p = await ctx.newPage();
      await p.goto(`${ceres.url}/web/jobs/${plain}`);
      await p.getByText('None recorded').waitFor();
      const [item] = await client.submit(`&(executable="/bin/true")(inputfiles=("x" "${xrd.url('nope.bin')}"))`);
      const st = await client.waitFor([item.id], FINAL, 120_000);
      assert.equal(st.get(item.id), 'FAILED');
      await p.goto(`${ceres.url}/web/jobs/${item.id as string}`);
      await p.getByText('None recorded').waitFor();
      await p.close();
    });
  },
);
