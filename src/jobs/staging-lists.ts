/**
 * The job's staging lists as the diagnose items `input` and `output` show them, in the
 * control-file line format A-REX's clients know (docs/control-directory.md): one line per
 * file, `/<session path>` then, space-separated, where it comes from or goes to; spaces
 * and backslashes in a field are backslash-escaped; URLs in their redacted form (a
 * password or a token in a URL never reaches a diagnose file).
 *
 * `input` holds the inputs still to be delivered: while stage-in runs (ACCEPTED,
 * PREPARING), each download and each client upload not yet completed; once stage-in has
 * finished, nothing (the list empties as files arrive). A job whose stage-in never
 * finished (it failed or was killed in ACCEPTED or PREPARING) keeps what did not arrive:
 * the uploads missing and the downloads without a transfer record in `statistics`.
 * `output` holds every declared output: its target URL, or nothing for a file kept in
 * the session for the client.
 */
import type { InputFile, OutputFile } from '../vocabulary/job-description.js';
import type { JobRecord } from '../store/job-record.js';
import { escapeField, sessionPath } from '../staging/control-lines.js';
import { redactUrl } from '../staging/redact.js';
import { parseTransferUrl } from '../staging/transfer-url.js';

const rel = (name: string): string => name.replace(/^\/+/, '');

/** The form in which `statistics` records a transfer's URL (the stager's redacted display). */
function recordedUrl(source: string): string {
  try {
    return parseTransferUrl(source).display;
  } catch {
    return redactUrl(source);
  }
}

/** The states in which stage-in has not finished yet (the engine stages in at PREPARING). */
const BEFORE_STAGE_IN_END: readonly string[] = ['ACCEPTED', 'PREPARING'];

/** Whether the job's stage-in has not (or never) finished: its inputs may still be missing. */
export function stageInOpen(j: Pick<JobRecord, 'state' | 'failedState'>): boolean {
  return (
    BEFORE_STAGE_IN_END.includes(j.state) || (j.failedState !== null && BEFORE_STAGE_IN_END.includes(j.failedState))
  );
}

function inputLine(f: InputFile): string {
  const pfn = escapeField(sessionPath(rel(f.name)));
  if (f.source !== undefined) return `${pfn} ${escapeField(redactUrl(f.source))}`;
  if (f.size !== undefined) return `${pfn} ${f.size}${f.checksum !== undefined ? `.${escapeField(f.checksum)}` : ''}`;
  return pfn;
}

function outputLine(f: OutputFile): string {
  const pfn = escapeField(sessionPath(rel(f.name)));
  return f.target === undefined ? pfn : `${pfn} ${escapeField(redactUrl(f.target))}`;
}

/** What is known of the inputs delivered so far: the control files' records. */
export interface Delivered {
  /** `input_status` lines: `/<path>` per completed client upload. */
  readonly uploaded: ReadonlySet<string>;
  /** Redacted source URLs of the downloads `statistics` records (`inputfile:url=...`). */
  readonly downloaded: ReadonlySet<string>;
}

export function inputListText(j: JobRecord, delivered: Delivered): string {
  if (!stageInOpen(j)) return '';
  const running = BEFORE_STAGE_IN_END.includes(j.state);
  const missing = j.description.inputFiles.filter((f) =>
    f.source === undefined
      ? !delivered.uploaded.has(sessionPath(rel(f.name)))
      : running || !delivered.downloaded.has(recordedUrl(f.source)),
  );
  return missing.map((f) => `${inputLine(f)}\n`).join('');
}

export function outputListText(j: JobRecord): string {
  return j.description.outputFiles.map((f) => `${outputLine(f)}\n`).join('');
}

/** The source URLs of the `inputfile` lines of a `statistics` file. */
export function downloadedUrls(statistics: string): Set<string> {
  const urls = new Set<string>();
  for (const line of statistics.split('\n')) {
    const m = /^inputfile:url=(.*),size=\d+,starttime=/.exec(line);
    if (m?.[1] !== undefined) urls.add(m[1]);
  }
  return urls;
}
