/**
 * `{base}/jobs/<id>/session[/<path>]` (spec §4.4; A-REX §5.7, §9.2, §9.6):
 *
 *   GET|HEAD  file: content (streamed, single Range → 206); directory: listing
 *   PUT       file: stored (streamed; Content-Range writes at an offset; parents made)
 *   PATCH     existing file: bytes written in place at Content-Range or offset= (a Ceres extension)
 *   DELETE    file or directory (recursive); 204. The session directory itself: 403
 *   PROPFIND  Depth 0|1, 207 Multi-Status with absolute hrefs (what arcget lists with)
 *
 * Every method first resolves the job as the caller's (another user's job is a 404,
 * like a missing one), then the path (session-path.ts: 400 for malformed paths;
 * src/fs/safe-fs.ts: 403 for symlinks), and works inside a lease on the job's verified
 * session directory (session-dirs.ts: 409 CE_ERR_SESSION_REPLACED when the job put a
 * link or another directory in its place). Other methods: 405 with Allow (router).
 * Deliberate differences from A-REX are listed in docs/sessions.md.
 */
import { bodyError, onBodyTooSlow, readBody } from '../../../http/body.js';
import { contentTypeOf } from '../../../http/negotiate.js';
import { sendEmpty } from '../../../http/send.js';
import { sendStream } from '../../../http/send-stream.js';
import { ceError } from '../../../errors/ce-error.js';
import type { JobService } from '../../../jobs/job-service.js';
import { isPlausibleJobId } from '../../../jobs/job-id.js';
import { parseContentRange, patchRange, type ContentRange } from '../../../sessions/byte-range.js';
import { encodePath, encodeSegment } from '../../../sessions/href.js';
import { readDirTable, type DirTable } from '../../../sessions/dir-table.js';
import { listingHtml, listingJson, listingXml } from '../../../sessions/listing.js';
import { checkPropfindBody, davResourceOf, multistatus, parseDepth } from '../../../sessions/propfind.js';
import { sendFileHandle } from '../send-file.js';
import type { SessionFiles } from '../../../sessions/session-files.js';
import type { SessionDirs } from '../../../sessions/session-dirs.js';
import { parseSessionPath, type SessionPath } from '../../../sessions/session-path.js';
import type { Resource, RestRequest } from '../resource.js';

export interface SessionResourceOptions {
  readonly jobs: Pick<JobService, 'visible'>;
  readonly sessions: Pick<SessionDirs, 'withRoot'>;
  readonly files: SessionFiles;
  /** Cap on a PROPFIND request body (default 64 KiB; larger is a 413). */
  readonly maxPropfindBodyBytes?: number;
  /** Most entries a listed directory may have (default 1,000,000; more is a 403). */
  readonly maxListingEntries?: number;
}

interface Target {
  readonly id: string;
  readonly ident: string | null;
  readonly path: SessionPath;
}

export const DEFAULT_MAX_LISTING_ENTRIES = 1_000_000;

export function sessionResource(o: SessionResourceOptions): Resource {
  const maxPropfind = o.maxPropfindBodyBytes ?? 64 * 1024;
  const listingLimits = (req: RestRequest) => ({
    maxEntries: o.maxListingEntries ?? DEFAULT_MAX_LISTING_ENTRIES,
    gone: () => req.raw.socket.destroyed,
  });

  const target = (req: RestRequest): Target => {
    const caller = req.caller();
    const [rawId = '', ...rawPath] = req.rest;
    const id = decodeId(rawId);
    const j = o.jobs.visible(caller.owner, id, caller.monitors);
    return { id, ident: j.sessionIdent, path: parseSessionPath(rawPath) };
  };
  /** `fn` gets the confined path of the session directory, valid until it settles. */
  const inSession = <T>(t: Target, fn: (dir: string) => Promise<T>): Promise<T> =>
    o.sessions.withRoot(t.id, t.ident, fn);

  const get = async (req: RestRequest) => {
    const t = target(req);
    const opened = await inSession(t, (dir) => o.files.open(dir, t.path));
    if (opened.kind === 'file') {
      return sendFileHandle(req.raw, req.reply, opened.handle, opened.stat.size, {
        contentType: 'application/octet-stream',
        lastModified: opened.stat.mtime,
      });
    }
    let table: DirTable;
    try {
      table = await readDirTable(opened.handle, listingLimits(req));
    } finally {
      await opened.handle.close();
    }
    switch (req.format) {
      case 'xml':
        return sendStream(req.reply, 200, contentTypeOf.xml, listingXml(table));
      case 'json':
        return sendStream(req.reply, 200, contentTypeOf.json, listingJson(table));
      case 'html': {
        const segs = t.path.segments;
        const base = `${req.basePath}/jobs/${encodeSegment(t.id)}/session/${segs.length ? `${encodePath(segs)}/` : ''}`;
        const title = `${t.id}/session${segs.length ? `/${t.path.rel}` : ''}`;
        return sendStream(req.reply, 200, 'text/html; charset=utf-8', listingHtml(table, base, title));
      }
    }
  };

  const put = async (req: RestRequest) => {
    const t = target(req);
    if (t.path.segments.length === 0 || t.path.trailingSlash) throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
    const cr = req.raw.headers['content-range'];
    await upload(req, t, cr === undefined ? undefined : parseContentRange(cr));
    return sendEmpty(req.reply, 200);
  };

  /**
   * PATCH (a Ceres extension, docs/sessions.md "PATCH"): bytes written in place into an
   * existing file, at the range its `Content-Range` or `offset=` names; the clean form of
   * the ranged PUT, through the very same writer and checks (links, quota, the job's
   * ownership and session, disk marks: disk-guard.ts). A missing file is a 404: PATCH
   * modifies, it never creates.
   */
  const patch = async (req: RestRequest) => {
    const t = target(req);
    if (t.path.segments.length === 0 || t.path.trailingSlash) throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
    const range = patchRange(
      req.raw.headers['content-range'],
      req.query.get('offset'),
      req.raw.headers['content-length'],
    );
    const opened = await inSession(t, (dir) => o.files.open(dir, t.path));
    await opened.handle.close();
    if (opened.kind !== 'file') throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
    await upload(req, t, range);
    return sendEmpty(req.reply, 204);
  };

  const upload = async (req: RestRequest, t: Target, range: ContentRange | undefined): Promise<void> => {
    const h = req.raw.headers;
    const cl = h['content-length'];
    // The body-rate floor stops the upload with its 408 through the signal.
    const ac = new AbortController();
    const unwatch = onBodyTooSlow(req.raw, (e) => ac.abort(e));
    try {
      await inSession(t, (sessionDir) =>
        o.files.put({
          jobId: t.id,
          sessionDir,
          path: t.path,
          body: req.raw,
          signal: ac.signal,
          contentLength: cl === undefined ? undefined : Number(cl),
          range,
          ifNoneMatchAny: h['if-none-match']?.trim() === '*',
        }),
      );
    } catch (e) {
      throw bodyError(req.raw, e);
    } finally {
      unwatch();
    }
  };

  const del = async (req: RestRequest) => {
    const t = target(req);
    await inSession(t, (dir) => o.files.remove(t.id, dir, t.path));
    return sendEmpty(req.reply, 204);
  };

  const propfind = async (req: RestRequest) => {
    const t = target(req);
    checkPropfindBody(await readBody(req.raw, maxPropfind));
    const depth = parseDepth(req.raw.headers.depth);
    const opened = await inSession(t, (dir) => o.files.open(dir, t.path));
    const segs = t.path.segments;
    const sessionUrl = `${originOf(req)}${req.basePath}/jobs/${encodeSegment(t.id)}/session`;
    const selfHref = `${sessionUrl}/${encodePath(segs)}${segs.length && opened.kind === 'dir' ? '/' : ''}`;
    const self = davResourceOf(selfHref, segs[segs.length - 1] ?? t.id, opened.kind, opened.stat);
    let children: DirTable | undefined;
    try {
      if (opened.kind === 'dir' && depth === 1) children = await readDirTable(opened.handle, listingLimits(req));
    } finally {
      await opened.handle.close();
    }
    return sendStream(req.reply, 207, 'application/xml; charset=utf-8', multistatus(self, children));
  };

  return { methods: { GET: get, PUT: put, PATCH: patch, DELETE: del, PROPFIND: propfind } };
}

/** Job ids are plain alphanumerics: anything else (also after decoding) names no job. */
function decodeId(raw: string): string {
  let id = raw;
  if (raw.includes('%')) {
    try {
      id = decodeURIComponent(raw);
    } catch {
      throw ceError('CE_ERR_JOB_NOT_FOUND');
    }
  }
  if (!isPlausibleJobId(id)) throw ceError('CE_ERR_JOB_NOT_FOUND');
  return id;
}

/** `scheme://host[:port]` of the request URL (hrefs must be absolute). */
function originOf(req: RestRequest): string {
  const u = req.requestUrl;
  const from = u.indexOf('://');
  const i = u.indexOf(req.basePath, from < 0 ? 0 : from + 3);
  return i < 0 ? '' : u.slice(0, i);
}
