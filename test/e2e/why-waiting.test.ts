// Why a job waits, on the real service (docs/routes.md, "Why a job waits"): a job held by
// its route's maxRunning says so, with the limit's value, in its info document (GLUE2
// OtherMessages, JSON and XML) and on its web page (headless Chromium), to its owner only
// as counts; once the running job is gone the held one goes on and says nothing more, in
// the document (not a copy kept from before) and on the page, which refreshes its status.
// A job name with markup is shown as text. Before, nothing said why.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext } from 'playwright-core';
import { certificateContext, chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { untilValue } from '../helpers/poll.js';

const HELD = 'Waiting: held by route one maxRunning 1 (1 in the batch system)';
const IN_BATCH = new Set(['SUBMITTING', 'QUEUING', 'RUNNING']);
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];
const NAME = '<b id=injected>bold</b>';
const sleeper = `(&(executable="/bin/sleep")(arguments="600")(queue="one")(jobname="${NAME}"))`;

/** The OtherMessages of a JSON ComputingActivity, as a list (a lone value is a string). */
const messages = (doc: { ComputingActivity: { OtherMessages?: string | string[] } }): string[] => {
  const m = doc.ComputingActivity.OtherMessages;
  return m === undefined ? [] : Array.isArray(m) ? m : [m];
};

describe('why a job waits, on the real service', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let ids: string[] = [];
  let held = '';
  let running = '';

  before(async () => {
    // A second user, made before the service starts (the development PKI).
    const stateDir = tempDir('state');
    await initDevPki(join(stateDir, 'pki'));
    await addDevUser(join(stateDir, 'pki'), 'bob');
    ceres = await startCeres({
      stateDir,
      config: {
        cluster: { queues: [{ name: 'one' }, { name: 'main' }] },
        routes: [
          { name: 'one', match: { queues: ['one'] }, maxRunning: 1 },
          { name: 'rest', match: {} },
        ],
      },
    });
    alice = Client.forUser(ceres);
    bob = Client.forUser(ceres, 'bob-proxy.pem');
    ids = (await alice.submit(`+${sleeper}${sleeper}`)).map((j) => j.id as string);
    const st = await untilValue('one job in the batch system, one held', async () => {
      const s = [...(await alice.status(ids)).values()];
      return s.filter((x) => IN_BATCH.has(x)).length === 1 && s.includes('PREPARED') ? s : undefined;
    });
    held = ids[st.indexOf('PREPARED')]!;
    running = ids[1 - st.indexOf('PREPARED')]!;
  });

  after(async () => {
    if (ids.length > 0) {
      await alice?.action('kill', ids);
      await alice?.waitFor(ids, ENDED);
    }
    await alice?.close();
    await bob?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  it("the held job's info document names the route's limit and its value; the running one says nothing", async () => {
    // Asked twice: the second answer would come from the kept documents.
    for (let i = 0; i < 2; i++) {
      const [a, b] = await alice.action('info', [held, running]);
      assert.ok(messages(a.info_document).includes(HELD), JSON.stringify(a.info_document.ComputingActivity));
      assert.deepEqual(
        messages(b.info_document).filter((m) => m.startsWith('Waiting: ')),
        [],
      );
    }
    const xml = await alice.req('POST', '/rest/1.1/jobs?action=info', JSON.stringify({ job: [{ id: held }] }), {
      'content-type': 'application/json',
      accept: 'application/xml',
    });
    assert.ok(xml.text.includes(`<OtherMessages>${HELD}</OtherMessages>`), xml.text);
  });

  it("another user's job is invisible; their own waiting job names counts, never whose jobs hold it", async () => {
    const [other] = await bob.action('info', [held]);
    assert.equal(other['status-code'], '404');
    const [mine] = await bob.submit(`+${sleeper}`);
    const msg = await untilValue("bob's job held", async () => {
      const [i] = await bob.action('info', [mine.id as string]);
      return messages(i.info_document).find((m) => m.startsWith('Waiting: held'));
    });
    assert.equal(msg, HELD);
    await bob.action('kill', [mine.id as string]);
    await bob.waitFor([mine.id as string], ENDED);
  });

  describe('on the web job page', { skip: chromiumSkip }, () => {
    let browser: Browser;
    let ctx: BrowserContext;
    before(async () => {
      browser = await launchChromium();
      ctx = await certificateContext(browser, new URL(ceres.url).origin, ceres.pkiDir, {
        cert: 'usercert.pem',
        key: 'userkey.pem',
      });
    });
    after(async () => {
      await ctx?.close();
      await browser?.close();
    });

    it('says why, shows a name with markup as text, and drops the line once the job goes on', async () => {
      const p = await ctx.newPage();
      await p.goto(`${ceres.url}/web/jobs/${held}`);
      assert.equal(await p.locator('#job-waiting').textContent(), HELD.slice('Waiting: '.length));
      assert.equal(await p.locator('#injected').count(), 0, 'the name is no markup');
      assert.equal(await p.locator('main h1').textContent(), NAME);
      // Kept current: the running job goes, the held one takes its place in the batch system.
      await alice.action('kill', [running]);
      await p.locator('#job-waiting').waitFor({ state: 'detached', timeout: 60_000 });
      const [a] = await alice.action('info', [held]);
      assert.deepEqual(
        messages(a.info_document).filter((m) => m.startsWith('Waiting: held')),
        [],
        'the document is written anew, not kept from before',
      );
      await p.close();
    });
  });
});
