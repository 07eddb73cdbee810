/**
 * The site pages rendered in process: the info page from the one GLUE2 builder (every
 * share, its limits and policies, runtime environments, a field it has never seen), the
 * overview's pictures (titles, descriptions and tables; names with markup or SVG-breaking
 * characters as text; the legend bounded; the windows), and who sees the figures per VO.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { el } from '../../src/doc/element.js';
import { buildInfoDocument } from '../../src/info/info-document.js';
import { infoBody, label } from '../../src/api/web/info-page.js';
import { LEGEND_MAX, sitePictures, WINDOWS, windowPoints } from '../../src/api/web/site-pictures.js';
import { sitePicturesFor, type SiteContext } from '../../src/api/web/site-routes.js';
import * as views from '../../src/api/web/views.js';
import { niceMax } from '../../src/api/web/svg-chart.js';
import { emptyBucket, type BucketData } from '../../src/store/site-buckets.js';
import type { SeriesPoint } from '../../src/store/site-series.js';
import type { Caller } from '../../src/http/caller.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { snapshot } from '../info/fixtures.js';

const EVIL = `</text><script>alert(1)</script><svg onload="x">&amp;'"`;
const NOW = Date.UTC(2026, 0, 5, 10, 2, 0);

/** No element or attribute the page did not write: the evil text appears only escaped. */
function assertInert(h: string): void {
  const bad = /<script|<svg onload|onload="|<\/text><script/i.exec(h);
  assert.equal(bad, null, `markup from a name: ${bad?.[0]} at ${bad?.index}`);
  assert.ok(
    h.includes('&lt;/text&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;svg onload=&quot;x&quot;&gt;'),
    'the name, escaped',
  );
}

test('the info page shows every share with its limits and policies, the endpoints and the runtime environments', () => {
  const doc = buildInfoDocument(
    snapshot({
      queues: [
        { name: 'main', description: EVIL, maxWallTimeSeconds: 86400, maxMemoryBytes: 4 * 1024 ** 3, vos: ['atlas'] },
        { name: 'short', maxWallTimeSeconds: 3600, minWallTimeSeconds: 60, servingState: 'draining' },
      ],
      accessRules: ['vo:atlas', 'vo:cms'],
      runtimeEnvironments: [{ name: 'APPS/HEP/ATLAS-1.0', description: EVIL }],
    }),
  );
  const h = infoBody(doc, { mount: '/arex', raw: '/arex/rest/1.1/info' }).text;
  assertInert(h);
  for (const want of [
    '<th scope="row">main</th>',
    '<th scope="row">short</th>',
    '<th scope="row">main_atlas</th>', // the VO share, read like any other share
    'draining',
    '1 h 00 min 00 s (3600 s)',
    '4096 MB',
    '<code>vo:atlas</code>',
    '<code>vo:cms</code>',
    'main_atlas: <code>vo:atlas</code>',
    'APPS/HEP/ATLAS',
    'org.nordugrid.arcrest',
    'href="/arex/rest/1.1/info"',
    'Min wall time',
  ])
    assert.ok(h.includes(want), want);
  assert.doesNotMatch(h, /urn:ogf/, 'ids are left out');
});

test('a share or field the page has never seen is shown without a change to the page', () => {
  const share = el('ComputingShare', [
    el('ID', 'urn:x'),
    el('Name', 'route-alice'),
    el('MappingQueue', 'main'),
    el('RouteWeight', '3'),
    el('MaxFancyJobs', '7'),
    el('MappingPolicy', [el('Rule', 'route:alice')]),
  ]);
  const doc = el('InfoRoot', [el('Domains', [el('ComputingService', [el('Name', 'site'), share])])]);
  const h = infoBody(doc, { mount: '', raw: '/rest/1.1/info' }).text;
  assert.ok(h.includes('<th scope="row">route-alice</th>'));
  assert.ok(h.includes('Route weight'), 'an unknown leaf is listed');
  assert.ok(h.includes('Max fancy jobs'), 'an unknown limit is a limit column');
  assert.ok(h.includes('route-alice: <code>route:alice</code>'));
  assert.ok(h.includes('None are offered'));
  // A document without a service still makes a page (with the raw link).
  assert.ok(infoBody(el('InfoRoot', []), { mount: '', raw: '/r' }).text.includes('href="/r"'));
  assert.equal(label('MaxCPUTime'), 'Max CPU time');
});

const bucket = (over: Partial<BucketData>): BucketData => ({ ...emptyBucket(), ...over });

function stored(): SeriesPoint[] {
  const by = { queue: { main: 3, [EVIL]: 1 }, vo: {} as Record<string, number>, route: {} };
  for (let i = 0; i < 20; i++) by.vo[`vo${i}`] = i + 1;
  by.vo[EVIL] = 50;
  return [
    {
      start: NOW - 5 * 60_000,
      data: bucket({
        samples: 1,
        states: { RUNNING: 3, QUEUING: 1 },
        by,
        ended: { FINISHED: 4, FAILED: 1 },
        stageIn: 2,
        stageOut: 5,
        wait: [1, 2, 0, 0, 0, 0, 0, 1],
        run: [0, 0, 3, 0, 0, 0, 0, 0],
      }),
    },
  ];
}

test('the pictures: an image with a title and a description each, its figures as a table, names as text', () => {
  const h = sitePictures({
    mount: '/m',
    window: WINDOWS[0]!,
    stored: stored(),
    now: NOW,
    dimensions: ['queue', 'vo', 'route'],
  }).text;
  assertInert(h);
  const charts = h.match(/<svg [^>]*role="img"/g) ?? [];
  // states, queue, VO (no route figures), ended, staging, wait, run
  assert.equal(charts.length, 7);
  for (const id of ['pic-states', 'pic-queue', 'pic-vo', 'pic-ended', 'pic-staging', 'pic-wait', 'pic-run']) {
    assert.ok(h.includes(`aria-labelledby="${id}-t ${id}-d"`), id);
    assert.match(h, new RegExp(`<desc id="${id}-d">[^<]+</desc>`), id);
  }
  assert.doesNotMatch(h, /id="pic-route"/);
  assert.doesNotMatch(h, /style=/, 'no style attribute: the policy allows none');
  // The VO legend: the LEGEND_MAX busiest, the rest as one "other".
  const vo = /<figure class="chart" id="pic-vo">([\s\S]*?)<\/figure>/.exec(h)?.[1] ?? '';
  const legend = [...(/<ul class="legend">([\s\S]*?)<\/ul>/.exec(vo)?.[1] ?? '').matchAll(/<li>/g)];
  assert.equal(legend.length, LEGEND_MAX + 1);
  assert.match(vo, /vo19/);
  assert.doesNotMatch(vo, /vo0</);
  assert.match(vo, />other</);
  // 72 five-minute points in 6 hours, each a table row.
  assert.equal(
    (/<figure class="chart" id="pic-states">[\s\S]*?<\/figure>/.exec(h)?.[0].match(/<th scope="row">/g) ?? []).length,
    72,
  );
  assert.ok(h.includes('hx-get="/m/web/site-pictures?window=6h"'));
  assert.ok(h.includes('hx-trigger="every 60s"'));
});

test('the windows: 48 hours and 60 days are drawn as at most 144 points, buckets summed', () => {
  const w48 = WINDOWS.find((w) => w.name === '48h')!;
  const w60 = WINDOWS.find((w) => w.name === '60d')!;
  const pts = (w: typeof w48) => windowPoints(w, stored(), NOW);
  assert.equal(pts(w48).length, 144);
  assert.equal(pts(w60).length, 144);
  const withData = pts(w48).filter((p) => p.data.samples > 0);
  assert.equal(withData.length, 1);
  assert.equal(withData[0]!.data.ended.FINISHED, 4);
  // A point of the store outside the window is not drawn.
  assert.equal(windowPoints(WINDOWS[0]!, stored(), NOW + 7 * 3600_000).filter((p) => p.data.samples > 0).length, 0);
  assert.equal(niceMax(0), 1);
  assert.equal(niceMax(7), 10);
  assert.equal(niceMax(120), 200);
});

test('figures per VO and route: site administrators only, unless the configuration shows them to all', () => {
  const ctx = (admin: boolean): SiteContext => ({ mount: '', isAdmin: () => admin }) as unknown as SiteContext;
  const v = { ...views, assets: undefined } as unknown as Parameters<typeof sitePicturesFor>[2];
  const c = { dn: '/CN=x', owner: '/CN=x' } as Caller;
  const series = { points: () => stored() };
  const pics = (admin: boolean, figuresByVo?: 'admins' | 'everyone') =>
    sitePicturesFor({ series, figuresByVo, now: () => NOW }, ctx(admin), v, c, {})!.text;
  assert.doesNotMatch(pics(false), /id="pic-vo"/);
  assert.match(pics(false), /id="pic-queue"/);
  assert.match(pics(false), /shown to site administrators/);
  assert.match(pics(true), /id="pic-vo"/);
  assert.match(pics(false, 'everyone'), /id="pic-vo"/);
  assert.equal(sitePicturesFor({}, ctx(true), v, c, {}), undefined);
  assert.throws(
    () => sitePicturesFor({ series }, ctx(true), v, c, { window: '<x>' }),
    (e: unknown) => isCeError(e) && e.statusCode === 400 && /window: one of 6h, 48h, 60d/.test(e.message),
  );
});

test('pictures are drawn once per tick, window and audience: never a user served an administrator’s', () => {
  const ctx = (admin: boolean): SiteContext => ({ mount: '', isAdmin: () => admin }) as unknown as SiteContext;
  const v = { ...views, assets: undefined } as unknown as Parameters<typeof sitePicturesFor>[2];
  const c = { dn: '/CN=x', owner: '/CN=x' } as Caller;
  let reads = 0;
  let generation = 1;
  const series = {
    points: () => {
      reads++;
      return stored();
    },
    generation: () => generation,
  };
  const o = { series, now: () => NOW };
  const admin = sitePicturesFor(o, ctx(true), v, c, {})!;
  assert.match(admin.text, /id="pic-vo"/);
  assert.equal(sitePicturesFor(o, ctx(true), v, c, {}), admin);
  assert.equal(reads, 1);
  assert.doesNotMatch(sitePicturesFor(o, ctx(false), v, c, {})!.text, /id="pic-vo"/);
  assert.equal(reads, 2);
  generation++;
  assert.notEqual(sitePicturesFor(o, ctx(true), v, c, {}), admin);
  assert.equal(reads, 3);
});
