/**
 * The site pages of the web interface, registered by routes.ts:
 *
 *   GET {mount}/web/info                      the info document as a page (info-page.ts)
 *   GET {mount}/web/site-pictures?window=     the overview's pictures, polled (site-pictures.ts)
 *
 * and the pictures the overview carries. Who sees what: every signed-in caller sees the
 * site's totals and the figures per queue (the public info document publishes those per
 * queue too); the figures per VO and per route are for site administrators, unless the
 * configuration (`web.siteFiguresByVo: everyone`) shows them to all.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { XmlElement } from '../../doc/element.js';
import { ceError } from '../../errors/ce-error.js';
import type { Caller } from '../../http/caller.js';
import type { Dimension } from '../../store/site-buckets.js';
import type { SeriesPoint } from '../../store/site-series.js';
import type { Html } from './html.js';
import type * as ViewModules from './views.js';
import type { Assets } from './assets.js';

type Views = typeof ViewModules & { readonly assets: Assets };

export interface SiteOptions {
  /** The GLUE2 document the REST `info` endpoint serves (the one source, src/info). */
  readonly info?: (() => XmlElement) | undefined;
  /** The stored buckets of `seconds` length starting within [from, to] (ms). */
  readonly series?:
    { points(seconds: number, from: number, to: number): SeriesPoint[]; generation?(): number } | undefined;
  /** Who sees the figures per VO and route (default: site administrators). */
  readonly figuresByVo?: 'admins' | 'everyone' | undefined;
  readonly now?: () => number;
  /** How often the series is counted (seconds): the pictures are fetched again no faster than 5 s, no slower than 60 s. */
  readonly tickSeconds?: number | undefined;
}

export interface SiteContext {
  readonly mount: string;
  readonly web: (
    fn: (req: FastifyRequest, reply: FastifyReply) => unknown,
  ) => (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  readonly callerOf: (req: FastifyRequest['raw']) => Promise<Caller>;
  readonly views: () => Promise<Views>;
  readonly shell: (v: Views, c: Caller) => Parameters<Views['page']>[0];
  readonly isAdmin: (c: Caller) => boolean;
}

/**
 * Pictures drawn since the series' last tick, per window, audience and point: every open
 * overview fetches them again each minute, and the 60-day window reads 1,440 buckets (about
 * 140 ms at the bound, bench/web-site.ts). At most one entry per window and audience (6); the
 * whole cache goes with the next tick.
 */
const drawn = new WeakMap<object, { generation: number; pictures: Map<string, Html> }>();

/** The overview's pictures for `c`, of the window the query names (a 400 for an unknown one). */
export function sitePicturesFor(
  o: SiteOptions,
  x: SiteContext,
  v: Views,
  c: Caller,
  query: Readonly<Record<string, string | undefined>>,
): Html | undefined {
  if (o.series === undefined) return undefined;
  const name = query.window;
  const w = name === undefined || name === '' ? v.DEFAULT_WINDOW : v.WINDOWS.find((x) => x.name === name);
  if (w === undefined)
    throw ceError('CE_ERR_HTTP_BAD_QUERY', `window: one of ${v.WINDOWS.map((x) => x.name).join(', ')}`);
  const now = (o.now ?? Date.now)();
  const dimensions: Dimension[] = o.figuresByVo === 'everyone' || x.isAdmin(c) ? ['queue', 'vo', 'route'] : ['queue'];
  const generation = o.series.generation?.();
  let cache = drawn.get(o.series);
  if (cache === undefined || cache.generation !== generation)
    drawn.set(o.series, (cache = { generation: generation ?? NaN, pictures: new Map() }));
  const key = `${w.name} ${dimensions.join()} ${Math.floor(now / (w.resolution * 1000 * w.group))}`;
  const had = generation === undefined ? undefined : cache.pictures.get(key);
  if (had !== undefined) return had;
  const stored = o.series.points(w.resolution, now - w.spanSeconds * 1000 - w.resolution * 1000 * w.group, now);
  const refreshSeconds = Math.min(60, Math.max(5, o.tickSeconds ?? 60));
  const pictures = v.sitePictures({ mount: x.mount, window: w, stored, now, dimensions, refreshSeconds });
  // A point later (a new key) replaces the entries of the one before.
  for (const k of cache.pictures.keys()) if (k.startsWith(`${w.name} ${dimensions.join()} `)) cache.pictures.delete(k);
  cache.pictures.set(key, pictures);
  return pictures;
}

export function registerSitePages(app: FastifyInstance, o: SiteOptions, x: SiteContext): void {
  const m = x.mount;
  const q = (req: FastifyRequest) => req.query as Record<string, string | undefined>;

  app.get(
    `${m}/web/info`,
    x.web(async (req, reply) => {
      const c = await x.callerOf(req.raw);
      if (o.info === undefined) throw ceError('CE_ERR_HTTP_NOT_FOUND');
      const v = await x.views();
      const body = v.infoBody(o.info(), { mount: m, raw: `${m}/rest/1.1/info` });
      return v.sendPage(reply, 200, v.page(x.shell(v, c), 'Site information', body));
    }),
  );

  app.get(
    `${m}/web/site-pictures`,
    x.web(async (req, reply) => {
      const c = await x.callerOf(req.raw);
      const v = await x.views();
      const h = sitePicturesFor(o, x, v, c, q(req));
      if (h === undefined) throw ceError('CE_ERR_HTTP_NOT_FOUND');
      return v.sendPage(reply, 200, h);
    }),
  );
}
