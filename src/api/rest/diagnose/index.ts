/**
 * `GET|HEAD {base}/jobs/<id>/diagnose/<name>` (spec §4.6; A-REX §5.8): a
 * control file of the caller's job, for debugging (arcget saves all 14 as the job's
 * log directory; `arccat -l` reads `errors`; job-description retrieval reads
 * `description`).
 *
 * The name is checked first: anything but the 14 names is 404 `Diagnostic item not
 * found`. Then the job (another user's job is a 404 like a missing one). Content:
 * `text/plain`, `application/xml` for `xml`; single Range as for session files.
 * Some items are rendered from the job record (`render`, plugged in by the
 * composition root: always current); the others are read from the control
 * directory, and an absent file is 404 `Not found`. Other methods: 405 (router).
 */
import { ceError } from '../../../errors/ce-error.js';
import { isDiagnoseName, type ControlDir, type DiagnoseName } from '../../../store/control-dir.js';
import type { JobService } from '../../../jobs/job-service.js';
import type { JobRecord } from '../../../store/job-record.js';
import { sendBuffer, sendFileHandle } from '../send-file.js';
import type { Resource, RestRequest } from '../resource.js';

/** Content of a diagnose item rendered from the record; undefined: read the control file. */
export type DiagnoseRenderer = (
  job: JobRecord,
  name: DiagnoseName,
) => string | Buffer | undefined | Promise<string | Buffer | undefined>;

export interface DiagnoseResourceOptions {
  readonly jobs: Pick<JobService, 'visible'>;
  readonly control: Pick<ControlDir, 'openFile'>;
  readonly render?: DiagnoseRenderer;
}

export function diagnoseResource(o: DiagnoseResourceOptions): Resource {
  const get = async (req: RestRequest) => {
    const caller = req.caller();
    const [id = '', name = ''] = req.rest;
    if (!isDiagnoseName(name)) throw ceError('CE_ERR_SESSION_DIAGNOSE_UNKNOWN');
    const job = o.jobs.visible(caller.owner, id, caller.monitors);
    const info = { contentType: name === 'xml' ? 'application/xml' : 'text/plain' };
    const rendered = o.render ? await o.render(job, name) : undefined;
    if (rendered !== undefined)
      return sendBuffer(req.raw, req.reply, typeof rendered === 'string' ? Buffer.from(rendered) : rendered, info);
    const fh = await o.control.openFile(id, name);
    if (!fh) throw ceError('CE_ERR_SESSION_DIAGNOSE_ABSENT');
    const st = await fh.stat();
    if (!st.isFile()) {
      await fh.close();
      throw ceError('CE_ERR_SESSION_DIAGNOSE_ABSENT');
    }
    return sendFileHandle(req.raw, req.reply, fh, st.size, { ...info, lastModified: st.mtime });
  };
  return { methods: { GET: get } };
}
