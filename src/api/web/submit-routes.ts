/**
 * Submitting from the browser: a form with a pasted or uploaded xRSL/ADL description, a
 * queue, a delegation and input files, posted as `multipart/form-data` (it works without
 * script). It is one more way into the same submission as `POST jobs?action=new`: the
 * same JobService.submit with the same caller options (src/api/submit-options.ts), so the
 * authorization, the queue rules, drains, routes and the per-user job limit apply as they
 * do to a client; the input files go through the same confined writer and per-job quota
 * as the REST and web uploads.
 *
 *   GET  {mount}/web/submit    the form
 *   POST {mount}/web/submit    fields in document order: csrf, queue, delegation,
 *                              description, descfile (a file), inputs (files)
 *
 * Guards, in order: the application's cross-site refusal (before this runs), the
 * operation's authorization (`create`), the declared length, the request token (read
 * before the description is parsed or any file written), the description's size (at most
 * `jobs.maxDescriptionBytes`: the form is for one or a few jobs, a bulk of thousands
 * belongs to a client). A refused description is answered with the form again, each
 * failure beside its line.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { ceError, isCeError } from '../../errors/ce-error.js';
import { bodyError } from '../../http/body.js';
import type { Caller, Operation } from '../../http/caller.js';
import { isMultiDescription } from '../../jobdesc/split-submission.js';
import type { ItemResult, JobService } from '../../jobs/job-service.js';
import type { JobRecord } from '../../store/job-record.js';
import { callerSubmitOptions } from '../submit-options.js';
import type { Shell } from './layout.js';
import type { SubmitFailure, SubmitForm } from './submit-page.js';
import type * as ViewModules from './views.js';
import type * as MultipartModule from './multipart.js';
import type { Assets } from './assets.js';

/** The page modules, loaded with the first request that needs them (routes.ts). */
export type Views = typeof ViewModules & { readonly assets: Assets };

/** What the submission routes share with the rest of the interface (routes.ts). */
export interface WebKit {
  readonly mount: string;
  readonly web: (
    fn: (req: FastifyRequest, reply: FastifyReply) => unknown,
  ) => (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  readonly callerOf: (raw: IncomingMessage, op?: Operation) => Promise<Caller>;
  readonly checkToken: (c: Caller, token: string | undefined) => void;
  readonly issueToken: (c: Caller) => string;
  readonly views: () => Promise<Views>;
  readonly shell: (v: Views, c: Caller | undefined) => Shell;
  readonly multipart: () => Promise<typeof MultipartModule>;
}

export interface SubmitOptions {
  readonly jobs: Pick<JobService, 'submit' | 'visible'>;
  /** The configured queues (the form offers those the caller may use). */
  readonly queues: () => readonly string[];
  readonly delegations: (owner: string) => readonly string[];
  /** Writes one input file into the new job's session directory (the REST upload's writer and quota). */
  readonly putInput: (job: JobRecord, name: string, body: Readable) => Promise<void>;
  /** Read per request (reloadable). */
  readonly maxDescriptionBytes: number;
  /** The most the form's input files may hold together (the per-job upload quota). */
  readonly maxInputBytes: number;
}

/** The form's parts: five fields and its files (each file is one part). */
const MAX_INPUT_FILES = 64;
const FORM_OVERHEAD_BYTES = 64 * 1024;

export function registerSubmit(app: FastifyInstance, k: WebKit, o: SubmitOptions): void {
  const m = k.mount;
  const queuesFor = (c: Caller) => o.queues().filter((q) => c.queues === undefined || c.queues.includes(q));
  const tooLarge = () =>
    ceError(
      'CE_ERR_WEB_DESCRIPTION_TOO_LARGE',
      `The job description is larger than ${o.maxDescriptionBytes} bytes, the most this form takes: submit it with a client`,
      { headers: { connection: 'close' } },
    );
  const form = async (reply: FastifyReply, c: Caller, status: number, f: Partial<SubmitForm>) => {
    const v = await k.views();
    const body = v.submitBody({
      mount: m,
      csrf: k.issueToken(c),
      queues: queuesFor(c),
      delegations: o.delegations(c.owner),
      maxDescriptionBytes: o.maxDescriptionBytes,
      ...f,
    });
    return v.sendPage(reply, status, v.page(k.shell(v, c), 'Submit a job', body));
  };

  /** An input file of a job just made; a refusal says the job exists and where to upload it again. */
  const storeInput = async (job: JobRecord, name: string, body: Readable) => {
    try {
      await o.putInput(job, name, body);
    } catch (e) {
      if (!isCeError(e)) throw e;
      throw ceError(
        e.code,
        `The job ${job.id} was submitted, but its input file was not stored (${e.message}): upload it from the job's page, ${m}/web/jobs/${job.id}`,
        { headers: { ...e.headers } },
      );
    }
  };

  app.get(
    `${m}/web/submit`,
    k.web(async (req, reply) => form(reply, await k.callerOf(req.raw, 'create'), 200, {})),
  );

  app.post(
    `${m}/web/submit`,
    k.web(async (req, reply) => {
      const c = await k.callerOf(req.raw, 'create');
      const maxBody = 2 * o.maxDescriptionBytes + o.maxInputBytes + FORM_OVERHEAD_BYTES;
      const cl = req.headers['content-length'];
      if (cl !== undefined && !(Number(cl) <= maxBody)) throw tooLarge();
      const { MultipartReader, boundaryOf } = await k.multipart();
      const mp = new MultipartReader(req.raw, boundaryOf(req.headers['content-type']), {
        maxParts: 5 + MAX_INPUT_FILES,
        maxHeaderBytes: 8 * 1024,
        maxFieldBytes: 4 * 1024,
        maxBodyBytes: maxBody,
      });
      const fields: { csrf?: string; queue?: string; delegation?: string } = {};
      let pasted = '';
      let fromFile = '';
      let job: JobRecord | undefined;
      /** The form again, with why the submission was refused. */
      let answer: { status: number; form: Partial<SubmitForm> } | undefined;
      let results: ItemResult[] = [];
      /** Submits once (before the first input file, or at the end); a refusal becomes the form again. */
      const submit = async (withFiles: boolean): Promise<void> => {
        k.checkToken(c, fields.csrf);
        const text = pasted.trim() !== '' ? pasted : fromFile;
        const shown = { description: text, queue: fields.queue, delegation: fields.delegation };
        try {
          if (pasted.trim() !== '' && fromFile.trim() !== '') throw ceError('CE_ERR_WEB_TWO_DESCRIPTIONS');
          if (text.trim() === '') throw ceError('CE_ERR_WEB_NO_DESCRIPTION');
          if (withFiles && isMultiDescription(text)) throw ceError('CE_ERR_WEB_FILES_NEED_ONE_JOB');
          results = await o.jobs.submit(c.owner, Buffer.from(text, 'utf8'), {
            ...callerSubmitOptions(c),
            queue: nonEmpty(fields.queue),
            delegationId: nonEmpty(fields.delegation),
            clientHost: req.raw.socket.remoteAddress,
          });
        } catch (e) {
          if (!isCeError(e)) throw e;
          answer = { status: e.statusCode, form: { ...shown, refused: e.message } };
          return;
        }
        const failed = results.filter((r) => r.status >= 300);
        if (failed.length > 0) {
          answer = {
            // The first refusal's status (400 a malformed description, 403 a queue not open, 503 the job limit).
            status: failed[0]?.status ?? 400,
            form: {
              ...shown,
              failures: failed.map((r): SubmitFailure => ({ reason: r.reason, line: r.line })),
              created: results.flatMap((r) => (r.id === undefined ? [] : [r.id])),
            },
          };
          return;
        }
        const id = results[0]?.id;
        if (results.length === 1 && id !== undefined) job = o.jobs.visible(c.owner, id);
      };
      let files = 0;
      try {
        for (let part = await mp.next(); part !== undefined; part = await mp.next()) {
          if (part.name === 'description' && part.filename === undefined) {
            pasted = await mp.text(o.maxDescriptionBytes, tooLarge);
          } else if (part.name === 'descfile' && part.filename !== undefined) {
            fromFile = await mp.text(o.maxDescriptionBytes, tooLarge);
          } else if (part.name === 'inputs' && part.filename !== undefined) {
            // A file input left empty sends one part without a name and content.
            if (part.filename === '') {
              await mp.text(0);
              continue;
            }
            if (files++ === 0) await submit(true);
            // Refused: the rest of the form is dropped unread (mp.drop below).
            if (answer !== undefined) break;
            if (job === undefined) throw ceError('CE_ERR_WEB_FILES_NEED_ONE_JOB');
            await storeInput(job, part.filename, mp.stream());
          } else if (part.filename === undefined && ['csrf', 'queue', 'delegation'].includes(part.name)) {
            fields[part.name as 'csrf' | 'queue' | 'delegation'] = await mp.text();
          } else {
            throw ceError('CE_ERR_WEB_FORM_INVALID', 'The submission form is malformed: an unexpected field');
          }
        }
        if (files === 0) await submit(false);
      } catch (e) {
        throw bodyError(req.raw, e);
      } finally {
        mp.drop();
      }
      if (answer !== undefined) return form(reply, c, answer.status, answer.form);
      const first = results[0]?.id;
      return reply
        .code(303)
        .header(
          'location',
          results.length === 1 && first !== undefined
            ? `${m}/web/jobs/${first}?done=submitted`
            : `${m}/web/jobs?done=submitted`,
        )
        .send();
    }),
  );
}

function nonEmpty(s: string | undefined): string | undefined {
  return s === undefined || s.trim() === '' ? undefined : s.trim();
}
