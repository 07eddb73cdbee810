/** The page bodies (no I/O: plain values in, escaped HTML out). */
import { html, type Html } from './html.js';
import type { JobRecord } from '../../store/job-record.js';
import { duration, kib, type ErrorsFile, type Usage } from './job-history.js';
import { waitingLine } from './waiting-line.js';
import { transfersSection, type Transfer } from './job-transfers.js';

export const when = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? '' : new Date(ms).toISOString().replace('T', ' ').slice(0, 19) + ' UTC';

/** A table's header row; a name starting with `*` is a column hidden on narrow screens. */
function heads(...names: string[]): Html {
  return html`<thead>
    <tr>
      ${names.map((n) => (n.startsWith('*') ? html`<th scope="col" class="wide">${n.slice(1)}</th>` : html`<th scope="col">${n}</th>`))}
    </tr>
  </thead>`;
}

/** A form of one button that posts to `action` with the page's request token (and `fields`). */
function postButton(b: {
  action: string;
  csrf: string;
  label: string;
  ariaLabel?: string;
  danger?: boolean;
  fields?: Record<string, string>;
}): Html {
  const extra = Object.entries(b.fields ?? {}).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}" />`);
  return html`<form method="post" action="${b.action}" class="inline">
    <input type="hidden" name="csrf" value="${b.csrf}" />${extra}<button
      type="submit"
      ${b.danger ? html`class="danger"` : ''}
      ${b.ariaLabel === undefined ? '' : html`aria-label="${b.ariaLabel}"`}
    >
      ${b.label}
    </button>
  </form>`;
}

export interface QueueLine {
  readonly queue: string;
  readonly running: number;
  readonly waiting: number;
  readonly free: number | undefined;
}

export function overviewBody(o: {
  version: string;
  healthy: boolean;
  queues: readonly QueueLine[];
  states: readonly { state: string; n: number }[];
  mount: string;
}): Html {
  return html`<h1>Cluster overview</h1>
    <div class="cards">
      <section class="card" aria-labelledby="svc">
        <h2 id="svc">Service</h2>
        <dl>
          <dt>Version</dt>
          <dd>${o.version}</dd>
          <dt>Health</dt>
          <dd class="${o.healthy ? 'notice' : 'error'}">${o.healthy ? 'accepting jobs' : 'not accepting jobs'}</dd>
        </dl>
      </section>
      <section class="card" aria-labelledby="mine">
        <h2 id="mine">My jobs per state</h2>
        ${
          o.states.length === 0
            ? html`<p>No jobs.</p>`
            : html`<ul>
                ${o.states.map((s) => html`<li><a href="${o.mount}/web/jobs?state=${s.state}">${s.state}</a>: ${s.n}</li>`)}
              </ul>`
        }
      </section>
    </div>
    <section aria-labelledby="q">
      <h2 id="q">Queues</h2>
      <div class="table-wrap">
        <table>
          ${heads('Queue', 'Running', 'Waiting', 'Free slots')}
          <tbody>
            ${o.queues.map(
              (q) =>
                html`<tr>
                  <td>${q.queue}</td>
                  <td>${q.running}</td>
                  <td>${q.waiting}</td>
                  <td>${q.free ?? 'unknown'}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
    </section>`;
}

export function jobStateFragment(j: JobRecord, waiting?: string): Html {
  return html`<dl>
    <dt>State</dt>
    <dd class="state state-${j.restState}" id="job-state">${j.restState}</dd>
    <dt>Internal state</dt>
    <dd>${j.state}${j.pending ? ' (pending)' : ''}</dd>
    <dt>Queue</dt>
    <dd>${j.queue}</dd>
    <dt>Submitted</dt>
    <dd>${when(j.createdAt)}</dd>
    <dt>Started</dt>
    <dd>${when(j.startedAt) || '—'}</dd>
    <dt>Ended</dt>
    <dd>${when(j.endedAt) || '—'}</dd>
    <dt>Exit code</dt>
    <dd id="exit-code">${j.exitCode ?? '—'}</dd>
    ${
      j.failureReason === null
        ? ''
        : html`<dt>Failure</dt>
            <dd class="error">${j.failureReason}</dd>`
    }
    ${waitingLine(waiting)}
  </dl>`;
}

export interface FileEntry {
  readonly name: string;
  readonly dir: boolean;
  readonly size: number;
}

export function jobBody(o: {
  mount: string;
  job: JobRecord;
  /** Why the job waits (src/jobs/wait-reason.ts); undefined: it does not, or not shown. */
  waiting?: string | undefined;
  csrf: string;
  dir: string;
  files: readonly FileEntry[] | string;
  errors: ErrorsFile;
  usage: Usage | undefined;
  /** The staged inputs and outputs (statistics control file), job-transfers.ts. */
  transfers?: readonly Transfer[];
  description: string | undefined;
  diagnose: readonly string[];
  /** Why kill and restart do not apply now (undefined: they do). */
  applicable: { kill: string | undefined; restart: string | undefined };
  notice: string | undefined;
  maxUpload: number;
  /** Shown to an administrator looking at another user's job. */
  owner?: string | undefined;
  /** The event stream the page follows (absent: it polls). */
  live?: LiveSource | undefined;
}): Html {
  const m = o.mount;
  const id = o.job.id;
  const base = `${m}/web/jobs/${id}`;
  const prefix = o.dir === '' ? '' : `${o.dir}/`;
  // An administrator on another user's job: look, kill and clean; no file changes.
  const mine = o.owner === undefined;
  const files =
    typeof o.files === 'string'
      ? html`<p>${o.files}</p>`
      : html`<div class="table-wrap">
          <table>
            <caption>
              Session directory: /${o.dir}
            </caption>
            ${heads('Name', 'Size', 'Actions')}
            <tbody>
              ${
                o.dir === ''
                  ? ''
                  : html`<tr>
                      <td>
                        <a href="${base}?dir=${encodeURIComponent(o.dir.split('/').slice(0, -1).join('/'))}">..</a>
                      </td>
                      <td></td>
                      <td></td>
                    </tr>`
              }
              ${o.files.map((f) =>
                f.dir
                  ? html`<tr>
                      <td><a href="${base}?dir=${encodeURIComponent(prefix + f.name)}">${f.name}/</a></td>
                      <td></td>
                      <td></td>
                    </tr>`
                  : html`<tr>
                      <td>${f.name}</td>
                      <td>${f.size}</td>
                      <td>
                        <a
                          href="${base}/files/${(prefix + f.name).split('/').map(encodeURIComponent).join('/')}"
                          download
                          >Download<span class="skip"> ${f.name}</span></a
                        >
                        ${mine ? postButton({ action: `${base}/files-delete`, csrf: o.csrf, label: 'Delete', ariaLabel: `Delete ${f.name}`, danger: true, fields: { path: prefix + f.name } }) : ''}
                      </td>
                    </tr>`,
              )}
            </tbody>
          </table>
        </div>`;
  return html`${
    o.job.name === ''
      ? html`<h1>Job <code>${id}</code></h1>`
      : html`<h1>${o.job.name}</h1>
          <p>Job <code>${id}</code></p>`
  }
    ${o.notice === undefined ? '' : html`<p class="notice" role="status">${o.notice}</p>`}
    ${o.owner === undefined ? '' : html`<p class="notice">Administrator view: the job of <code>${o.owner}</code>.</p>`}
    <section aria-labelledby="st">
      <h2 id="st">Status</h2>
      <div id="job-status" data-refresh="${base}/status" data-poll="2000" ${liveAttributes(o.live)}>
        ${jobStateFragment(o.job, o.waiting)}
      </div>
      <div id="job-actions" data-refresh="${base}/actions" data-poll="2000" data-keep-focus>
        ${jobActions({ base, csrf: o.csrf, mine, ...o.applicable })}
      </div>
    </section>
    ${historySection(o.job, o.errors)} ${usageSection(o.usage)} ${transfersSection(o.transfers ?? [])}
    <section aria-labelledby="fl">
      <h2 id="fl">Session files</h2>
      ${files}
      ${
        mine
          ? html`<form
              data-upload
              method="post"
              action="${base}/upload"
              enctype="multipart/form-data"
              data-max="${o.maxUpload}"
              data-dir="${o.dir}"
              class="actions"
            >
              <input type="hidden" name="csrf" value="${o.csrf}" /><input type="hidden" name="dir" value="${o.dir}" />
              <label for="upload-file">Upload a file to /${o.dir}</label
              ><input id="upload-file" type="file" name="file" required /><button type="submit">Upload</button
              ><span data-upload-status role="status"></span>
            </form>`
          : ''
      }
    </section>
    <section aria-labelledby="er">
      <h2 id="er">Messages</h2>
      ${
        o.errors.messages.length === 0
          ? html`<p>None.</p>`
          : html`<ul class="log">
              ${o.errors.messages.map(
                (e) => html`<li>${e.at === '' ? '' : html`<time>${e.at}</time> `}<span>${e.text}</span></li>`,
              )}
            </ul>`
      }
      ${mine ? html`<p>The whole file: <a href="${m}/rest/1.1/jobs/${id}/diagnose/errors">errors</a>.</p>` : ''}
    </section>
    <section aria-labelledby="ds">
      <h2 id="ds">Description</h2>
      ${o.description === undefined ? html`<p>Not kept.</p>` : html`<pre>${o.description}</pre>`}
    </section>
    ${
      mine
        ? html`<section aria-labelledby="dg">
            <h2 id="dg">Diagnose files</h2>
            ${
              o.diagnose.length === 0
                ? html`<p>None yet.</p>`
                : html`<ul>
                    ${o.diagnose.map((d) => html`<li><a href="${m}/rest/1.1/jobs/${id}/diagnose/${d}">${d}</a></li>`)}
                  </ul>`
            }
          </section>`
        : ''
    }`;
}

/** The caller's job event stream, and the sequence number the page was drawn at. */
export interface LiveSource {
  readonly events: string;
  readonly lastEventId: number;
}

/** The attributes that make live-script.ts follow the stream (none: the element polls). */
export function liveAttributes(l: LiveSource | undefined): Html {
  return l === undefined ? html`` : html`data-events="${l.events}" data-last-event-id="${l.lastEventId}"`;
}

/**
 * The job's actions that apply now: Kill while the job can be killed, Restart (the owner's
 * only) where the state machine allows it, each with why not otherwise; Clean deletes the
 * job's files, so it sits behind a disclosure that says so (a confirmation that needs no
 * script: the page's policy allows no inline script, and works without any).
 */
export function jobActions(o: {
  base: string;
  csrf: string;
  mine: boolean;
  kill: string | undefined;
  restart: string | undefined;
}): Html {
  const why: string[] = [];
  if (o.kill !== undefined) why.push(`Kill: ${o.kill.replace(/^Job /, 'the job ')}.`);
  if (o.mine && o.restart !== undefined) why.push(`Restart: ${o.restart.replace(/^Job /, 'the job ')}.`);
  return html`<div class="actions job-actions">
      ${o.kill === undefined ? postButton({ action: `${o.base}/kill`, csrf: o.csrf, label: 'Kill', danger: true }) : ''}
      ${o.mine && o.restart === undefined ? postButton({ action: `${o.base}/restart`, csrf: o.csrf, label: 'Restart' }) : ''}
      <details class="confirm">
        <summary>Clean…</summary>
        <p>Cleaning deletes the job's session directory, its files and its record. It cannot be undone.</p>
        ${postButton({ action: `${o.base}/clean`, csrf: o.csrf, label: 'Clean: delete the job and its files', danger: true })}
      </details>
    </div>
    ${why.length === 0 ? '' : html`<p class="muted" id="not-offered">${why.join(' ')}</p>`}`;
}

/**
 * The state-change timeline from the errors file. A line lost to a crash between the
 * database commit and the append shows as a last step to the record's current state.
 */
export function historySection(j: JobRecord, e: ErrorsFile): Html {
  // The engine's position (`INLRMS`, `PENDING:PREPARING`), as the errors file writes it.
  const now = j.pending ? `PENDING:${j.state}` : j.state;
  const last = e.transitions[e.transitions.length - 1];
  const first = e.transitions[0];
  // Every job is stored ACCEPTED at submission (docs/lifecycle.md).
  const start = first === undefined ? 'ACCEPTED' : first.from;
  return html`<section aria-labelledby="hs">
    <h2 id="hs">State history</h2>
    <ol class="timeline">
      <li><time>${when(j.createdAt)}</time> <strong>${start}</strong> <span>submitted</span></li>
      ${e.transitions.map(
        (t) =>
          html`<li>
            <time>${t.at}</time> <strong>${t.to}</strong>
            <span>from ${t.from}${t.reason === '' ? '' : html`: ${t.reason}`}</span>
          </li>`,
      )}
      ${
        (last === undefined ? start : last.to) === now
          ? ''
          : html`<li>
              <time>${when(j.updatedAt)}</time> <strong>${now}</strong> <span>(the change was not logged)</span>
            </li>`
      }
    </ol>
  </section>`;
}

function usageSection(u: Usage | undefined): Html {
  const row = (k: string, v: string | undefined) => (v === undefined ? '' : html`<dt>${k}</dt><dd>${v}</dd>`);
  const opt = <T>(v: T | undefined, f: (x: T) => string) => (v === undefined ? undefined : f(v));
  const cpu =
    u?.userSeconds === undefined && u?.kernelSeconds === undefined
      ? undefined
      : `${duration((u?.userSeconds ?? 0) + (u?.kernelSeconds ?? 0))} (user ${duration(u?.userSeconds ?? 0)}, system ${duration(u?.kernelSeconds ?? 0)})`;
  return html`<section aria-labelledby="us">
    <h2 id="us">Usage</h2>
    ${
      u === undefined
        ? html`<p>Not reported yet: the batch system reports it when the job's run ends.</p>`
        : html`<dl id="usage">
            ${row('Exit code', opt(u.exitCode, String))} ${row('Wall time', opt(u.wallSeconds, duration))}
            ${row('CPU time', cpu)} ${row('Maximum memory', opt(u.maxRssKiB, kib))} ${row('Node', u.node)}
            ${row('Batch system message', u.message)}
          </dl>`
    }
  </section>`;
}

/** An expiry within this is highlighted: a day's jobs may outlive it. */
const NEAR_EXPIRY_MS = 24 * 3600 * 1000;

/** The expiry cell: the time, and how near it is (highlighted within a day, or past). */
function expiryCell(expiry: Date | undefined, now: number): Html {
  if (expiry === undefined) return html`<td>—</td>`;
  const left = expiry.getTime() - now;
  const h = Math.floor(left / 3600_000);
  const note = left <= 0 ? 'expired' : h < 1 ? 'expires within the hour' : `in ${h} h`;
  return html`<td class="${left < NEAR_EXPIRY_MS ? 'error near' : ''}">
    ${when(expiry.getTime())} <strong>(${note})</strong>
  </td>`;
}

export function delegationsBody(o: {
  mount: string;
  csrf: string;
  items: readonly {
    id: string;
    type: string;
    expiry: Date | undefined;
    jobs: readonly { id: string; name: string; state: string }[];
  }[];
  /** Jobs listed per delegation; one more in `jobs` means there are more. */
  shown: number;
  now: number;
  notice: string | undefined;
}): Html {
  return html`<h1>My delegations</h1>
    ${o.notice === undefined ? '' : html`<p class="notice" role="status">${o.notice}</p>`}
    <p>A delegation that jobs still use should not be deleted before they end: they need it to move their data.</p>
    <div class="table-wrap">
      <table>
        ${heads('Delegation', '*Type', 'Expires', 'Used by', 'Actions')}
        <tbody>
          ${
            o.items.length === 0
              ? html`<tr>
                  <td colspan="5">No delegations.</td>
                </tr>`
              : ''
          }
          ${o.items.map(
            (d) =>
              html`<tr>
                <td class="id">${d.id}</td>
                <td class="wide">${d.type}</td>
                ${expiryCell(d.expiry, o.now)}
                <td class="used-by">
                  ${
                    d.jobs.length === 0
                      ? 'no jobs'
                      : html`<ul>
                          ${d.jobs.slice(0, o.shown).map(
                            (j) =>
                              html`<li>
                                  <a href="${o.mount}/web/jobs/${j.id}">${j.name === '' ? j.id : j.name}</a>
                                  <span class="state state-${j.state}">${j.state}</span>
                                </li>`,
                          )}
                          ${d.jobs.length > o.shown ? html`<li>and more</li>` : ''}
                        </ul>`
                  }
                </td>
                <td>
                  ${postButton({ action: `${o.mount}/web/delegations/${d.id}/delete`, csrf: o.csrf, label: 'Delete', ariaLabel: `Delete delegation ${d.id}`, danger: true })}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
}

/**
 * An error page. `notAuthorized`: the caller may not use the pages at all, so the link
 * leads to what anyone may read (the public info document), never to another refusal.
 */
export function errorBody(status: number, message: string, mount: string, notAuthorized = false): Html {
  return html`<h1>${status === 404 ? 'Not found' : notAuthorized ? 'Not authorized' : 'Request refused'}</h1>
    <p class="error" role="alert">${message}</p>
    ${
      notAuthorized
        ? html`<p>
            What this site offers, and whom to ask: <a href="${mount}/rest/1.1/info">the site's information</a>.
          </p>`
        : html`<p><a href="${mount}/">Back to the overview</a></p>`
    }`;
}
