/**
 * Submitting from the browser, in headless Chromium on the real service: a pasted xRSL
 * with a queue and an input file runs with that file; an uploaded ADL file is submitted;
 * a refused description comes back in the form with each failure beside its line; markup
 * in a description and in its errors is shown as text; a 10 MB paste, a cross-site form,
 * a missing token, input files with several descriptions and a traversal file name are
 * refused with a clear message; the per-user job limit applies as to a REST submission.
 * One service and one browser for the file. Skipped where no chromium is installed,
 * unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { chromiumSkip, fitsWidth, startBrowserService, type BrowserService } from '../helpers/chromium.js';
import { removeDir, tempDir, type Client, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';

const skip = chromiumSkip;
const ADL = 'http://www.eu-emi.eu/es/2010/12/adl';
/** The per-user limit of jobs that have not ended, for the limit's test. */
const MAX_ACTIVE = 6;

describe('submission from the browser', { skip }, () => {
  let t: BrowserService;
  let ceres: RunningCeres;
  let ctx: BrowserContext;
  let client: Client;
  let origin: string;
  let dir: string;
  const dialogs: string[] = [];

  before(async () => {
    // The hostile origin's page posts a submission form to Ceres.
    t = await startBrowserService(
      {
        cluster: { queues: [{ name: 'main' }, { name: 'short' }] },
        jobs: { maxActiveJobsPerUser: MAX_ACTIVE, maxDescriptionBytes: 64 * 1024 },
      },
      () => `<!DOCTYPE html><form id="f" method="post" action="${ceres.url}/web/submit" enctype="multipart/form-data">
<input name="csrf" value="forged"><textarea name="description">&amp;(executable="/bin/true")(jobname="planted")</textarea></form>
<script>document.getElementById('f').submit();</script>`,
    );
    ({ ceres, ctx, client, origin } = t);
    ctx.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    dir = tempDir('websubmit');
  });

  after(async () => {
    await t?.close();
    if (dir) removeDir(dir);
  });

  /** The caller's job ids (REST list). */
  const jobIds = async (): Promise<string[]> =>
    ((await client.req('GET', '/rest/1.1/jobs')).json().job as { id: string }[] | undefined)?.map((j) => j.id) ?? [];

  const openForm = async (): Promise<Page> => {
    const p = await ctx.newPage();
    await p.goto(`${ceres.url}/web/submit`);
    return p;
  };

  it('submits a pasted xRSL with a queue and an input file: the job runs with the file', async () => {
    const p = await openForm();
    await p
      .getByLabel('Job description')
      .fill(
        '&(executable="/bin/sh")(arguments="-c" "cat in.txt")\n(inputfiles=("in.txt" ""))\n(stdout="out.txt")(jobname="from the browser")',
      );
    await p.getByLabel('Queue').selectOption('short');
    const input = join(dir, 'in.txt');
    writeFileSync(input, 'hello from an input file\n');
    await p.getByLabel('Input files').setInputFiles(input);
    await p.getByRole('button', { name: 'Submit' }).click();
    await p.getByText('Done: submitted.').waitFor();
    const id = /\/web\/jobs\/([A-Za-z0-9]+)/.exec(p.url())?.[1] as string;
    assert.ok(id, p.url());
    assert.equal(await p.locator('h1').textContent(), 'from the browser');
    assert.match((await p.locator('#job-status').textContent()) ?? '', /Queue\s*short/);
    assert.equal((await client.waitFor([id], ['FINISHED', 'FAILED'])).get(id), 'FINISHED');
    const out = await client.req('GET', `/rest/1.1/jobs/${id}/session/out.txt`, undefined, { accept: '*/*' });
    assert.equal(out.text, 'hello from an input file\n');
    await p.close();
  });

  it('submits an ADL description from a file', async () => {
    const p = await openForm();
    const file = join(dir, 'job.adl');
    writeFileSync(
      file,
      `<ActivityDescription xmlns="${ADL}"><ActivityIdentification><Name>adl from a file</Name></ActivityIdentification>` +
        '<Application><Executable><Path>/bin/true</Path></Executable></Application></ActivityDescription>',
    );
    await p.getByLabel('Description file').setInputFiles(file);
    await p.getByRole('button', { name: 'Submit' }).click();
    await p.getByText('Done: submitted.').waitFor();
    assert.equal(await p.locator('h1').textContent(), 'adl from a file');
    await p.close();
  });

  it('shows each failure beside its line and keeps the text in the form', async () => {
    const before = (await jobIds()).length;
    const p = await openForm();
    const text = '&(executable="/bin/true")\n(jobname="x")\n(stdout="o")\n(cputime="soon")\n(stderr="e")';
    await p.getByLabel('Job description').fill(text);
    const [answer] = await Promise.all([
      p.waitForResponse((r) => r.url().endsWith('/web/submit') && r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Submit' }).click(),
    ]);
    assert.equal(answer.status(), 422, 'the item status of an invalid xRSL');
    const line = p.locator('#desc-line-4');
    assert.match((await line.textContent()) ?? '', /cputime="soon"[\s\S]*nordugrid:xrsl parsing error/);
    assert.equal(await line.getAttribute('class'), 'bad');
    // The lines around it are shown, the summary links to the line.
    assert.equal(await p.locator('#desc-line-2').count(), 1);
    await p.getByRole('link', { name: 'Line 4' }).click();
    assert.equal(await p.getByLabel('Job description').inputValue(), text);
    assert.equal((await jobIds()).length, before, 'no job was made');

    // ADL: the line of the element concerned.
    await p
      .getByLabel('Job description')
      .fill(
        `<ActivityDescription xmlns="${ADL}">\n<Resources>\n<SlotRequirement>\n<NumberOfSlots>two</NumberOfSlots>\n</SlotRequirement>\n</Resources>\n</ActivityDescription>`,
      );
    await p.getByRole('button', { name: 'Submit' }).click();
    await p.locator('#desc-line-4.bad').waitFor();
    assert.match((await p.locator('#desc-line-4').textContent()) ?? '', /NumberOfSlots must be an integer, not 'two'/);
    await fitsWidth(p);
    await p.close();
  });

  it('shows markup of a description and of its errors as text', async () => {
    const p = await openForm();
    await p
      .getByLabel('Job description')
      .fill('&(executable="/bin/true")(jobname="<img src=x onerror=alert(1)>")\n(cputime="<script>alert(2)</script>")');
    await p.getByRole('button', { name: 'Submit' }).click();
    await p.locator('#desc-line-2.bad').waitFor();
    assert.match((await p.locator('#desc-line-2').textContent()) ?? '', /<script>alert\(2\)<\/script>/);
    assert.equal(await p.locator('main script, main img').count(), 0);
    assert.deepEqual(dialogs, []);
    await p.close();
  });

  it('refuses a 10 MB paste with a clear message before parsing it', async () => {
    const before = (await jobIds()).length;
    const p = await openForm();
    await p.getByLabel('Job description').evaluate(
      (t, n) => {
        (t as unknown as { value: string }).value = `&(executable="/bin/true")(arguments="${'a'.repeat(n)}")`;
      },
      10 * 1024 * 1024,
    );
    const [answer] = await Promise.all([
      p.waitForResponse((r) => r.url().endsWith('/web/submit') && r.request().method() === 'POST'),
      p.getByRole('button', { name: 'Submit' }).click(),
    ]);
    assert.equal(answer.status(), 413);
    await p.getByText(/larger than 65536 bytes, the most this form takes/).waitFor();
    assert.equal((await jobIds()).length, before);
    await p.close();
  });

  it('refuses a cross-site form and a form without its token: nothing is made', async () => {
    const before = (await jobIds()).length;
    const p = await ctx.newPage();
    await p.goto(t.attackerUrl);
    await p.waitForURL(/\/web\/submit$/, { timeout: 20_000 });
    assert.match(await p.content(), /refused/i);
    const noToken = await p.request.post(`${ceres.url}/web/submit`, {
      multipart: { description: '&(executable="/bin/true")' },
      headers: { origin },
    });
    assert.equal(noToken.status(), 403);
    assert.match(await noToken.text(), /reload the page/);
    assert.equal((await jobIds()).length, before);
    await p.close();
  });

  it('refuses input files with several descriptions, and a file name that leaves the session directory', async () => {
    const p = await openForm();
    const csrf = await p.locator('input[name=csrf]').inputValue();
    const before = (await jobIds()).length;
    const file = (name: string) => ({ name, mimeType: 'text/plain', buffer: Buffer.from('x') });
    const several = await p.request.post(`${ceres.url}/web/submit`, {
      multipart: { csrf, description: '+(&(executable="/bin/true"))(&(executable="/bin/true"))', inputs: file('a') },
      headers: { origin },
    });
    assert.equal(several.status(), 400);
    assert.match(await several.text(), /one job description only/);
    assert.equal((await jobIds()).length, before);
    const both = await p.request.post(`${ceres.url}/web/submit`, {
      multipart: { csrf, description: '&(executable="/bin/true")', descfile: file('&(executable="/bin/false")') },
      headers: { origin },
    });
    assert.equal(both.status(), 400);
    assert.match(await both.text(), /not both/);
    const bad = await p.request.post(`${ceres.url}/web/submit`, {
      multipart: { csrf, description: '&(executable="/bin/true")(inputfiles=("x" ""))', inputs: file('../x') },
      headers: { origin },
    });
    assert.equal(bad.status(), 400);
    // The job was made; the answer says where to upload the file.
    assert.match(await bad.text(), /was submitted, but its input file was not stored[\s\S]*\/web\/jobs\/[A-Za-z0-9]+/);
    const made = await jobIds();
    assert.equal(made.length, before + 1);
    await client.action('kill', made);
    await p.close();
  });

  it('applies the per-user job limit as a REST submission does', async () => {
    const long = '&(executable="/bin/sh")(arguments="-c" "sleep 600")';
    const mine: string[] = [];
    // The earlier tests' jobs end first: one ending later would make room for the form's job.
    const earlier = await jobIds();
    const ended = await client.waitFor(earlier, ['FINISHED', 'FAILED', 'KILLED']);
    assert.ok([...ended.values()].every((s) => ['FINISHED', 'FAILED', 'KILLED'].includes(s)));
    // Fill the limit through REST.
    for (let i = 0; i < MAX_ACTIVE + 2; i++) {
      const [item] = await client.submit(long);
      if (item.id === undefined) break;
      mine.push(item.id as string);
    }
    try {
      const p = await openForm();
      await p.getByLabel('Job description').fill(long);
      const [answer] = await Promise.all([
        p.waitForResponse((r) => r.url().endsWith('/web/submit') && r.request().method() === 'POST'),
        p.getByRole('button', { name: 'Submit' }).click(),
      ]);
      assert.equal(answer.status(), 503);
      await p.getByText(`No more jobs allowed: at most ${MAX_ACTIVE} active jobs per user`).waitFor();
      await p.close();
    } finally {
      await client.action('kill', mine);
    }
  });

  // Last: it changes the queues the other tests use.
  it('offers the queues of a reloaded configuration (SIGHUP) and refuses one the reload removed', async () => {
    const offered = async (p: Page): Promise<string[]> =>
      (
        await p.locator('#queue option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value))
      ).filter((v) => v !== '');
    // A form opened before the reload still offers `short`.
    const stale = await openForm();
    assert.deepEqual(await offered(stale), ['main', 'short']);
    const file = join(ceres.stateDir, 'test-config.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { cluster: { queues: { name: string }[] } };
    config.cluster.queues = [{ name: 'main' }, { name: 'added' }];
    writeFileSync(file, JSON.stringify(config));
    ceres.child.kill('SIGHUP');
    // REST takes the new queue once the reload is done.
    await until(
      async () => {
        const r = await client.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")(queue="added")');
        return r.status === 201 && (r.json() as { job: { id?: string }[] }).job[0]?.id !== undefined;
      },
      'the reload applied to REST',
      60_000,
    );
    const p = await openForm();
    assert.deepEqual(await offered(p), ['main', 'added']);
    await p.close();

    const before = (await jobIds()).length;
    await stale.getByLabel('Job description').fill('&(executable="/bin/true")');
    await stale.getByLabel('Queue').selectOption('short');
    const [answer] = await Promise.all([
      stale.waitForResponse((r) => r.url().endsWith('/web/submit') && r.request().method() === 'POST'),
      stale.getByRole('button', { name: 'Submit' }).click(),
    ]);
    assert.ok(answer.status() >= 400 && answer.status() < 500, String(answer.status()));
    await stale.getByText(/short/).first().waitFor();
    assert.deepEqual(await offered(stale), ['main', 'added'], "the refusal's form offers the queues there are now");
    assert.equal((await jobIds()).length, before, 'no job was made');
    await stale.close();
  });
});
