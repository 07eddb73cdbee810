/**
 * The job page and the job list follow the job event stream in headless Chromium on the
 * real service: a state change shows within a second with no polling (requests counted),
 * the action buttons are redrawn but not while the keyboard focus is in them, a stream
 * refused at the per-identity limit (429) falls back to polling and the page follows the
 * stream again later from the last event, and another origin cannot follow the user's
 * stream. One service and one browser for the file. Skipped where no chromium is
 * installed, unless CERES_REQUIRE_BROWSER=1.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BrowserContext, Page, Request } from 'playwright-core';
import { chromiumSkip, startBrowserService, type BrowserService } from '../helpers/chromium.js';
import type { Client, RunningCeres } from '../helpers/service.js';
import { openStream, type SseStream } from '../helpers/sse.js';

const skip = chromiumSkip;
/**
 * What the page functions below read of the page (they run in the page, as functions: the
 * pages' Content-Security-Policy refuses the eval a string expression would need).
 */
interface InPage {
  readonly document: {
    readonly body: { readonly dataset: Record<string, string | undefined> };
    getElementById(id: string): { readonly textContent: string | null } | null;
    querySelectorAll(s: string): Iterable<{ readonly textContent: string | null }>;
    readonly activeElement: { readonly textContent: string | null } | null;
  };
}

/** Streams one identity may hold (the refusal test holds them all). */
const MAX_STREAMS = 2;
const LONG = '&(executable="/bin/sh")(arguments="-c" "sleep 600")(jobname="long")';

describe('live updates over the job event stream, in a real browser', { skip }, () => {
  let t: BrowserService;
  let ceres: RunningCeres;
  let ctx: BrowserContext;
  let client: Client;

  before(async () => {
    t = await startBrowserService({ events: { maxStreamsPerIdentity: MAX_STREAMS } });
    ({ ceres, ctx, client } = t);
  });
  after(() => t?.close());

  /** A page recording its requests (address and time). */
  const recording = async (): Promise<{ p: Page; reqs: { url: string; at: number; r: Request }[] }> => {
    const p = await ctx.newPage();
    const reqs: { url: string; at: number; r: Request }[] = [];
    p.on('request', (r) => reqs.push({ url: r.url(), at: Date.now(), r }));
    return { p, reqs };
  };
  const running = async (): Promise<string> => {
    const [job] = await client.submit(LONG);
    const id = job.id as string;
    assert.equal((await client.waitFor([id], ['RUNNING'])).get(id), 'RUNNING');
    return id;
  };
  const mode = (p: Page, m: 'stream' | 'polling', timeout = 20_000) =>
    p.waitForFunction((want) => (globalThis as unknown as InPage).document.body.dataset.live === want, m, { timeout });
  const showsState = (p: Page, state: string) =>
    p.waitForFunction(
      (want) => (globalThis as unknown as InPage).document.getElementById('job-state')?.textContent === want,
      state,
      { timeout: 60_000 },
    );
  /** When the REST interface first answers `state` for the job (polled every 20 ms). */
  const restSees = async (id: string, state: string): Promise<number> => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
      if ((await client.status([id])).get(id) === state) return Date.now();
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`${id} never ${state}`);
  };

  it('shows a state change on an open job page within a second, without polling', async () => {
    const id = await running();
    const { p, reqs } = await recording();
    await p.goto(`${ceres.url}/web/jobs/${id}`);
    await mode(p, 'stream');
    const stream = reqs.find((q) => q.url.includes('/rest/1.1/jobs?'));
    assert.ok(stream, 'the page opened the event stream');
    assert.match(stream.url, new RegExp(`[?&]id=${id}&last_event_id=\\d+$`));
    assert.equal((await stream.r.allHeaders()).accept, 'text/event-stream');
    // What is measured here is an absence: longer than two polling intervals (2 s) of the
    // fallback pass with the page open, and it asks for nothing.
    await new Promise((r) => setTimeout(r, 4500));
    const asked = (since: number) => reqs.filter((q) => q.at >= since && /\/(status|actions)$/.test(q.url)).length;
    assert.equal(asked(0), 0, 'no polling while the stream is followed');
    const killAt = Date.now();
    const shown = showsState(p, 'KILLED');
    await client.action('kill', [id]);
    const rest = await restSees(id, 'KILLED');
    await shown;
    const onPage = Date.now();
    assert.ok(onPage - rest < 1000, `shown ${onPage - rest} ms after the REST interface answered KILLED`);
    // One redraw per event (KILLING, KILLED): no polling crept in.
    assert.ok(asked(killAt) <= 6, `${asked(killAt)} fragment requests for two events`);
    // The buttons were redrawn too: Kill no longer applies.
    await p.getByRole('button', { name: 'Kill' }).waitFor({ state: 'detached' });
    await p.close();
  });

  it('redraws the action buttons, but not while the keyboard focus is in them', async () => {
    const id = await running();
    const p = await ctx.newPage();
    await p.goto(`${ceres.url}/web/jobs/${id}`);
    await mode(p, 'stream');
    const kill = p.getByRole('button', { name: 'Kill' });
    await kill.focus();
    await client.action('kill', [id]);
    await showsState(p, 'KILLED');
    // The status was redrawn; the focused button stays where it was, focused.
    assert.equal(await kill.count(), 1);
    assert.equal(
      await p.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent?.trim()),
      'Kill',
    );
    await p.getByRole('link', { name: 'Overview' }).focus();
    await kill.waitFor({ state: 'detached' });
    await p.close();
  });

  it('the job list follows the stream: a job changing state shows within a second', async () => {
    const { p, reqs } = await recording();
    await p.goto(`${ceres.url}/web/jobs`);
    await mode(p, 'stream');
    const [job] = await client.submit('&(executable="/bin/true")(jobname="quick one")');
    const id = job.id as string;
    const shown = p.waitForFunction(
      (want) =>
        [...(globalThis as unknown as InPage).document.querySelectorAll('#job-rows tr')].some(
          (r) => r.textContent?.includes(want) === true && r.textContent.includes('FINISHED'),
        ),
      id,
      { timeout: 60_000 },
    );
    const rest = await restSees(id, 'FINISHED');
    await shown;
    assert.ok(Date.now() - rest < 1000, `shown ${Date.now() - rest} ms after the REST interface answered`);
    assert.equal(reqs.filter((q) => q.url.includes('fragment=rows')).length > 0, true, 'redrawn on events');
    await p.close();
  });

  it('falls back to polling when the stream is refused (429), then follows it again from the last event', async () => {
    const id = await running();
    // Every stream this identity may hold, held by a client.
    const held: SseStream[] = [];
    for (let i = 0; i < MAX_STREAMS; i++) held.push(await openStream(client.agent, `${ceres.url}/rest/1.1/jobs`));
    try {
      assert.equal((await openStream(client.agent, `${ceres.url}/rest/1.1/jobs`)).status, 429);
      const { p, reqs } = await recording();
      await p.goto(`${ceres.url}/web/jobs/${id}`);
      await mode(p, 'polling');
      await client.action('kill', [id]);
      await showsState(p, 'KILLED');
      assert.ok(
        reqs.some((q) => q.url.endsWith('/status')),
        'shown by polling',
      );
      for (const s of held.splice(0)) s.close();
      // The page tries the stream again after its back-off (5 s, then 10 s), from the last event.
      await mode(p, 'stream', 60_000);
      const again = reqs.filter((q) => q.url.includes('/rest/1.1/jobs?'));
      assert.ok(again.length >= 2, 'the stream was tried again');
      assert.match(again[again.length - 1]?.url ?? '', /last_event_id=\d+$/);
      await p.close();
    } finally {
      for (const s of held) s.close();
    }
  });

  it("another origin's page cannot follow the user's stream", async () => {
    const p = await ctx.newPage();
    await p.goto(t.attackerUrl);
    // No CORS headers: the browser refuses the cross-origin stream before any event.
    const got = await p.evaluate(`new Promise((resolve) => {
      const es = new EventSource(${JSON.stringify(`${ceres.url}/rest/1.1/jobs`)}, { withCredentials: true });
      es.onopen = () => resolve('open');
      es.onerror = () => resolve('error');
    })`);
    assert.equal(got, 'error');
    await p.close();
  });
});
