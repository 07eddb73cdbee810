/**
 * The web interface: pages for people with a browser and their certificate, beside the
 * REST tree on the same Fastify application (another rendering of the same services,
 * not another API). Every page is scoped to the caller as REST is (another user's job is
 * a 404 page), every HTML answer carries the security headers of layout.ts, and every
 * state-changing request passes two checks: the application's cross-site refusal
 * (Origin / Sec-Fetch-Site, src/http/cross-site.ts) and this interface's request token
 * (csrf.ts), bound to the caller's identity.
 *
 * Site administrators (config `web.admins`) see every user's jobs, and may kill and clean
 * them; a job page of another user's job is read-only for them otherwise. Every other
 * caller gets the same 404 for another's job as for a missing one (ids are not confirmed).
 *
 *   GET  {mount}/                          overview (queues, my jobs per state, version)
 *   GET  {mount}/web/jobs[?q&state&sort&after]  my jobs, searched, sorted, keyset-paged (job-list.ts);
 *                                          administrators: every user's, also ?user&account&vo; fragment=rows for polling
 *   GET  {mount}/web/jobs/<id>[?dir]       one job; /status and /actions are its live fragments
 *   POST {mount}/web/jobs/<id>/kill|clean|restart|files-delete   form actions (303 back)
 *   PUT  {mount}/web/jobs/<id>/upload?name  upload by script (token in the x-ceres-csrf header)
 *   POST {mount}/web/jobs/<id>/upload       upload form without script (multipart/form-data)
 *   GET  {mount}/web/jobs/<id>/files/<path> download, always as an attachment
 *   GET  {mount}/web/delegations, POST .../<id>/delete
 *   GET  {mount}/web/submit, POST          submission from the browser (submit-routes.ts)
 *   GET  {mount}/web/info, {mount}/web/site-pictures   the site pages (site-routes.ts)
 *   GET  {mount}/web/static/<name.hash.ext> style sheet and scripts
 *
 * The routes are registered at start; the pages, the static files and the multipart
 * reader are imported with the first request that needs them (views.ts), so a service
 * nobody browses never loads them.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ceError, isCeError } from '../../errors/ce-error.js';
import { bodyError, readBody } from '../../http/body.js';
import type { Authenticator, Authorizer, Caller, Operation } from '../../http/caller.js';
import type { JobService } from '../../jobs/job-service.js';
import type { JobActions } from '../../jobs/job-actions.js';
import { isPlausibleJobId } from '../../jobs/job-id.js';
import type { JobPages } from '../../store/job-pages.js';
import type { DelegationService } from '../../delegations/delegation-service.js';
import { CsrfTokens } from './csrf.js';
import { HTML_SECURITY_HEADERS } from './headers.js';
import type { QueueLine } from './pages.js';
import type { WebSessionFiles } from './session-access.js';
import { registerSubmit, type SubmitOptions, type Views } from './submit-routes.js';
import type { JobRecord } from '../../store/job-record.js';
import { registerSitePages, sitePicturesFor, type SiteContext, type SiteOptions } from './site-routes.js';

export interface WebOptions {
  readonly mountPoint: string;
  readonly authenticate: Authenticator;
  readonly authorize?: Authorizer | undefined;
  readonly jobs: Pick<JobService, 'visible'>;
  /** Any user's job by id (for administrators only). */
  readonly anyJob: (id: string) => JobRecord | undefined;
  /** Why a job waits (src/jobs/wait-reason.ts), shown with its state; absent: not shown. */
  readonly waitReason?: (j: JobRecord) => string | undefined;
  /** Identities (`Caller.dn`) of the site administrators. */
  readonly admins?: readonly string[];
  readonly actions: Pick<JobActions, 'kill' | 'clean' | 'restart' | 'applicable'>;
  readonly pages: Pick<JobPages, 'find' | 'countsOf' | 'usingDelegation'>;
  readonly restStates: readonly string[];
  readonly delegations: Pick<DelegationService, 'list' | 'remove' | 'expiry'>;
  readonly files: WebSessionFiles;
  readonly overview: () => { version: string; healthy: boolean; queues: readonly QueueLine[] };
  readonly readControl: (id: string, name: string) => Promise<string | undefined>;
  readonly rawDescription: (id: string) => string | undefined;
  readonly diagnoseNames: readonly string[];
  /** Which of the diagnose files exist for the job (the page links only those). */
  readonly existingControl?: (id: string) => Promise<readonly string[]>;
  /** How long a page's request token stays valid. */
  readonly tokenMaxAgeSeconds?: number;
  readonly maxUploadBytes: number;
  readonly pageSize?: number;
  /**
   * The newest job event's sequence number (src/jobs/event-feed.ts); absent: no event
   * stream, and the pages poll. A page drawn at N follows the caller's stream from N.
   */
  readonly latestEvent?: () => number;
  /** Submission from the browser (submit-routes.ts); absent: no form. */
  readonly submit?: SubmitOptions;
  /** The info page and the overview's pictures (site-routes.ts). */
  readonly site?: SiteOptions;
}

const ACTIONS = ['kill', 'clean', 'restart'] as const;
/** What an administrator may do to another user's job. */
const ADMIN_ACTIONS: ReadonlySet<string> = new Set(['kill', 'clean']);
/** Bounds of the script-free upload form: a browser sends three parts (token, folder, file). */
const FORM_LIMITS = { maxParts: 8, maxHeaderBytes: 8 * 1024, maxFieldBytes: 4 * 1024 };
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** Jobs listed per delegation on the delegations page (the rest are counted as "more"). */
const DELEGATION_JOBS_SHOWN = 10;

/** A module loaded on first call; a failed import is tried again by the next call. */
function onFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () =>
    (p ??= load().catch((e: unknown) => {
      p = undefined;
      throw e;
    }));
}

export function registerWeb(app: FastifyInstance, o: WebOptions): { tokens: CsrfTokens } {
  const m = o.mountPoint;
  const views = onFirstUse<Views>(async () => {
    const v = await import('./views.js');
    return { ...v, assets: v.loadAssets() };
  });
  const multipart = onFirstUse(() => import('./multipart.js'));
  const tokens = new CsrfTokens(o.tokenMaxAgeSeconds ?? 12 * 3600);
  const pageSize = o.pageSize ?? 50;

  /** The caller, authorized for `op` (what a bearer token's scopes must allow, as for REST). */
  const callerOf = async (raw: IncomingMessage, op: Operation = 'read'): Promise<Caller> => {
    const r = await o.authenticate(raw);
    if (!r.ok) throw ceError(r.code, r.reason, r.headers === undefined ? undefined : { headers: { ...r.headers } });
    return o.authorize ? o.authorize(raw, r.caller, op) : r.caller;
  };
  const admins = new Set(o.admins ?? []);
  const isAdmin = (c: Caller | undefined) => c !== undefined && admins.has(c.dn);
  const shell = (v: Views, c: Caller | undefined) => ({ mount: m, assets: v.assets, who: c?.dn, admin: isAdmin(c) });

  /** Handler wrapper: errors become an HTML page (or plain text for the upload script). */
  const web =
    (fn: (req: FastifyRequest, reply: FastifyReply) => unknown) =>
    async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
      try {
        return await fn(req, reply);
      } catch (e) {
        if (!isCeError(e) || reply.sent) throw e;
        req.log.info({ code: e.code, status: e.statusCode }, 'web request refused');
        for (const [k, v] of Object.entries(e.headers)) void reply.header(k, v);
        if (req.method === 'PUT')
          return reply
            .code(e.statusCode)
            .headers(HTML_SECURITY_HEADERS)
            .header('content-type', 'text/plain; charset=utf-8')
            .send(e.message);
        const v = await views();
        // Refused as a caller (authentication, authorization): every page would be refused too.
        const notAuthorized = /^CE_ERR_AUTHZ?_/.test(e.code);
        return v.sendPage(
          reply,
          e.statusCode,
          v.page(
            { ...shell(v, undefined), bare: notAuthorized },
            e.statusCode === 404 ? 'Not found' : notAuthorized ? 'Not authorized' : 'Refused',
            v.errorBody(e.statusCode, e.message, m, notAuthorized),
          ),
        );
      }
    };

  /** The caller's job, or for an administrator anyone's; else the 404 of a missing job. */
  const jobOf = (c: Caller, raw: string): JobRecord => {
    if (!isPlausibleJobId(raw)) throw ceError('CE_ERR_JOB_NOT_FOUND');
    if (!isAdmin(c)) return o.jobs.visible(c.owner, raw);
    const j = o.anyJob(raw);
    if (j === undefined) throw ceError('CE_ERR_JOB_NOT_FOUND');
    return j;
  };
  /** A job the caller may change: their own (an administrator's on another's job: 403, after the 404 check). */
  const ownJobOf = (c: Caller, raw: string): JobRecord => {
    const j = jobOf(c, raw);
    if (j.owner !== c.owner) throw ceError('CE_ERR_WEB_ADMIN_READ_ONLY');
    return j;
  };
  /**
   * The caller's own job event stream (the REST job list's, same origin: live-script.ts),
   * read before the page's data so no change after it is missed. Only for the caller's own
   * jobs: an administrator's view of others' polls (a stream carries its owner's jobs only).
   */
  const liveOf = (query: string) => {
    const at = o.latestEvent?.();
    return at === undefined ? undefined : { events: `${m}/rest/1.1/jobs${query}`, lastEventId: at };
  };
  const checkToken = (c: Caller, token: string | undefined) => {
    const r = tokens.check(c.owner, token);
    if (r === 'missing') throw ceError('CE_ERR_WEB_TOKEN_MISSING');
    if (r === 'invalid') throw ceError('CE_ERR_WEB_TOKEN_INVALID');
    if (r === 'expired') throw ceError('CE_ERR_WEB_TOKEN_EXPIRED');
  };
  const form = async (raw: IncomingMessage): Promise<URLSearchParams> =>
    new URLSearchParams((await readBody(raw, 64 * 1024)).toString('utf8'));
  const q = (req: FastifyRequest) => req.query as Record<string, string | undefined>;
  const site: SiteContext = { mount: m, web, callerOf: (raw) => callerOf(raw), views, shell, isAdmin };
  registerSitePages(app, o.site ?? {}, site);

  // Every HTML answer of the application (REST renderings and error pages included)
  // carries the security headers; a handler's own (a download's sandbox policy) wins.
  app.addHook('onSend', async (_req, reply, payload) => {
    const ct = reply.getHeader('content-type');
    if (typeof ct === 'string' && ct.startsWith('text/html')) {
      for (const [k, v] of Object.entries(HTML_SECURITY_HEADERS)) if (!reply.hasHeader(k)) void reply.header(k, v);
    }
    return payload;
  });

  app.get(`${m}/web/static/:name`, async (req, reply) => {
    const a = (await views()).assets.byName((req.params as { name: string }).name);
    if (a === undefined) throw ceError('CE_ERR_HTTP_NOT_FOUND');
    void reply
      .header('etag', a.etag)
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff');
    if (req.headers['if-none-match'] === a.etag) return reply.code(304).send();
    return reply.header('content-type', a.type).send(a.body);
  });

  app.get(
    `${m}/`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const states = o.pages.countsOf(c.owner);
      const v = await views();
      const pictures = sitePicturesFor(o.site ?? {}, site, v, c, q(req));
      return v.sendPage(
        reply,
        200,
        v.page(shell(v, c), 'Overview', v.html`${v.overviewBody({ ...o.overview(), states, mount: m })}${pictures}`),
      );
    }),
  );

  app.get(
    `${m}/web/jobs`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const all = isAdmin(c);
      const live = all ? undefined : liveOf('');
      const v = await views();
      const query = q(req);
      const { params: p, after } = v.parseListQuery(query, o.restStates, all);
      const rows = o.pages.find({
        owner: all ? undefined : c.owner,
        state: p.state,
        search: p.q,
        sort: p.sort,
        after,
        ownerDn: p.user,
        account: p.account,
        vo: p.vo,
        limit: pageSize + 1,
      });
      const more = rows.length > pageSize;
      const shown = more ? rows.slice(0, pageSize) : rows;
      if (query.fragment === 'rows') return v.sendPage(reply, 200, v.jobRows(m, shown, all));
      const last = shown[shown.length - 1];
      return v.sendPage(
        reply,
        200,
        v.page(
          shell(v, c),
          all ? 'All jobs' : 'My jobs',
          v.jobListBody({
            mount: m,
            states: o.restStates,
            params: p,
            rows: shown,
            next: more && last ? v.afterOf(p.sort, last) : undefined,
            first: after === undefined,
            after: query.after,
            all,
            live,
          }),
        ),
      );
    }),
  );

  app.get(
    `${m}/web/jobs/:id`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const live = liveOf(`?id=${encodeURIComponent((req.params as { id: string }).id)}`);
      const j = jobOf(c, (req.params as { id: string }).id);
      const dir = (q(req).dir ?? '').replace(/^\/+|\/+$/g, '');
      let files;
      try {
        files = await o.files.list(j, dir);
      } catch (e) {
        if (!isCeError(e)) throw e;
        files = `Not available: ${e.message}`;
      }
      const done = q(req).done;
      const v = await views();
      const body = v.jobBody({
        mount: m,
        job: j,
        waiting: o.waitReason?.(j),
        csrf: tokens.issue(c.owner),
        dir,
        files,
        errors: v.parseErrorsFile(await o.readControl(j.id, 'errors')),
        usage: v.parseDiag(await o.readControl(j.id, 'diag')),
        transfers: v.parseStatistics(await o.readControl(j.id, 'statistics')),
        owner: j.owner === c.owner ? undefined : j.ownerDn,
        description: o.rawDescription(j.id),
        diagnose: o.existingControl === undefined ? o.diagnoseNames : await o.existingControl(j.id),
        applicable: o.actions.applicable(j),
        notice: done === undefined ? undefined : `Done: ${done.slice(0, 40)}.`,
        maxUpload: o.maxUploadBytes,
        live: j.owner === c.owner ? live : undefined,
      });
      return v.sendPage(reply, 200, v.page(shell(v, c), j.name === '' ? `Job ${j.id}` : j.name, body));
    }),
  );

  app.get(
    `${m}/web/jobs/:id/status`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const j = jobOf(c, (req.params as { id: string }).id);
      const v = await views();
      return v.sendPage(reply, 200, v.jobStateFragment(j, o.waitReason?.(j)));
    }),
  );

  // The action buttons, redrawn with the status (live-script.ts keeps them while focused).
  app.get(
    `${m}/web/jobs/:id/actions`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const j = jobOf(c, (req.params as { id: string }).id);
      const v = await views();
      const mine = j.owner === c.owner;
      const base = `${m}/web/jobs/${j.id}`;
      return v.sendPage(
        reply,
        200,
        v.jobActions({ base, csrf: tokens.issue(c.owner), mine, ...o.actions.applicable(j) }),
      );
    }),
  );

  for (const a of ACTIONS) {
    app.post(
      `${m}/web/jobs/:id/${a}`,
      web(async (req, reply) => {
        const c = await callerOf(req.raw, a === 'restart' ? 'modify' : 'cancel');
        const j = ADMIN_ACTIONS.has(a)
          ? jobOf(c, (req.params as { id: string }).id)
          : ownJobOf(c, (req.params as { id: string }).id);
        checkToken(c, (await form(req.raw)).get('csrf') ?? undefined);
        if (j.owner !== c.owner)
          req.log.info({ job: j.id, admin: c.dn, owner: j.ownerDn, action: a }, 'administrator action on a job');
        // An administrator acts in the owner's name (the job actions are scoped by owner).
        const [r] = o.actions[a](j.owner, [j.id]);
        if (r && r.status >= 300) throw ceError('CE_ERR_HTTP_BAD_REQUEST', `${a}: ${r.reason}`);
        return reply.code(303).header('location', `${m}/web/jobs/${j.id}?done=${a}`).send();
      }),
    );
  }

  app.post(
    `${m}/web/jobs/:id/files-delete`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw, 'cancel');
      const j = ownJobOf(c, (req.params as { id: string }).id);
      const f = await form(req.raw);
      checkToken(c, f.get('csrf') ?? undefined);
      const path = f.get('path') ?? '';
      await o.files.remove(j, path);
      const dir = path.split('/').slice(0, -1).join('/');
      return reply
        .code(303)
        .header('location', `${m}/web/jobs/${j.id}?dir=${encodeURIComponent(dir)}&done=deleted`)
        .send();
    }),
  );

  app.put(
    `${m}/web/jobs/:id/upload`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw, 'create');
      const j = ownJobOf(c, (req.params as { id: string }).id);
      const t = req.headers['x-ceres-csrf'];
      checkToken(c, typeof t === 'string' ? t : undefined);
      const cl = Number(req.headers['content-length'] ?? NaN);
      if (!(cl <= o.maxUploadBytes))
        throw ceError(
          'CE_ERR_WEB_UPLOAD_TOO_LARGE',
          `The file is larger than the web upload limit of ${o.maxUploadBytes} bytes`,
          { headers: { connection: 'close' } },
        );
      await o.files.put(j, q(req).name ?? '', req.raw, cl);
      return reply.code(200).header('content-type', 'text/plain; charset=utf-8').send('stored');
    }),
  );

  // The upload form without script: multipart/form-data with the fields in document
  // order (csrf, dir, file). The token is checked before a byte of the file is written;
  // the file streams to disk through the same confined writer as REST uploads.
  app.post(
    `${m}/web/jobs/:id/upload`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw, 'create');
      const j = ownJobOf(c, (req.params as { id: string }).id);
      const maxBody = o.maxUploadBytes + FORM_OVERHEAD_BYTES;
      const cl = req.headers['content-length'];
      if (cl !== undefined && !(Number(cl) <= maxBody))
        throw ceError(
          'CE_ERR_WEB_UPLOAD_TOO_LARGE',
          `The file is larger than the web upload limit of ${o.maxUploadBytes} bytes`,
          {
            headers: { connection: 'close' },
          },
        );
      const { MultipartReader, boundaryOf } = await multipart();
      const mp = new MultipartReader(req.raw, boundaryOf(req.headers['content-type']), {
        ...FORM_LIMITS,
        maxBodyBytes: maxBody,
      });
      let stored: string | undefined;
      let dir = '';
      try {
        let token: string | undefined;
        for (let part = await mp.next(); part !== undefined; part = await mp.next()) {
          if (part.filename === undefined) {
            const v = await mp.text();
            if (part.name === 'csrf') token = v;
            else if (part.name === 'dir') dir = v.replace(/^\/+|\/+$/g, '');
            continue;
          }
          // A file: only after the token, only one, with a plain name.
          checkToken(c, token);
          if (part.name !== 'file' || stored !== undefined)
            throw ceError(
              'CE_ERR_WEB_FORM_INVALID',
              'The upload form is malformed: one file field named "file" is expected',
            );
          if (part.filename === '') throw ceError('CE_ERR_WEB_NO_FILE');
          await o.files.putIn(j, dir, part.filename, mp.stream());
          stored = part.filename;
        }
        checkToken(c, token);
        if (stored === undefined) throw ceError('CE_ERR_WEB_NO_FILE');
      } catch (e) {
        throw bodyError(req.raw, e);
      } finally {
        mp.drop();
      }
      return reply
        .code(303)
        .header('location', `${m}/web/jobs/${j.id}?dir=${encodeURIComponent(dir)}&done=uploaded`)
        .send();
    }),
  );

  app.get(
    `${m}/web/jobs/:id/files/*`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const j = jobOf(c, (req.params as { id: string }).id);
      const rel = (req.params as { '*': string })['*'];
      // Never rendered from this origin: an attachment, sniffing off, and a sandbox CSP in
      // case a browser displays it anyway (a job's x.html must not run script here).
      void reply.headers({ ...HTML_SECURITY_HEADERS, 'content-security-policy': "sandbox; default-src 'none'" });
      return o.files.download(j, rel, req.raw, reply);
    }),
  );

  app.get(
    `${m}/web/delegations`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw);
      const items = o.delegations.list(c.owner).map((d) => ({
        id: d.id,
        type: d.type,
        expiry: o.delegations.expiry(d.id),
        jobs: o.pages.usingDelegation(c.owner, d.id, DELEGATION_JOBS_SHOWN + 1),
      }));
      const done = q(req).done;
      const v = await views();
      return v.sendPage(
        reply,
        200,
        v.page(
          shell(v, c),
          'Delegations',
          v.delegationsBody({
            mount: m,
            csrf: tokens.issue(c.owner),
            items,
            shown: DELEGATION_JOBS_SHOWN,
            now: Date.now(),
            notice: done === undefined ? undefined : 'Delegation deleted.',
          }),
        ),
      );
    }),
  );

  app.post(
    `${m}/web/delegations/:id/delete`,
    web(async (req, reply) => {
      const c = await callerOf(req.raw, 'create');
      checkToken(c, (await form(req.raw)).get('csrf') ?? undefined);
      await o.delegations.remove(c.owner, (req.params as { id: string }).id);
      return reply.code(303).header('location', `${m}/web/delegations?done=1`).send();
    }),
  );

  if (o.submit !== undefined)
    registerSubmit(
      app,
      {
        mount: m,
        web,
        callerOf,
        checkToken,
        issueToken: (c) => tokens.issue(c.owner),
        views,
        shell,
        multipart,
      },
      o.submit,
    );

  return { tokens };
}
