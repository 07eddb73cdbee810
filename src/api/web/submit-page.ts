/**
 * The submission form and its answer (no I/O: plain values in, escaped HTML out). A
 * refused description is shown again in the form, and each failure beside the line of
 * the description it concerns (src/jobdesc gives the line; the failure's text is the one
 * the REST answer carries), with the lines around it, so a long description does not
 * make a long page: the whole text stays in the form to be corrected.
 */
import { html, type Html } from './html.js';

/** One refused description of the submission (a bulk body has several). */
export interface SubmitFailure {
  readonly reason: string;
  /** The 1-based line of the submitted text, where known. */
  readonly line?: number | undefined;
}

export interface SubmitForm {
  readonly mount: string;
  readonly csrf: string;
  /** The queues the caller may choose (empty: the description's or the default). */
  readonly queues: readonly string[];
  readonly delegations: readonly string[];
  readonly maxDescriptionBytes: number;
  /** What was submitted, shown again after a refusal. */
  readonly description?: string;
  readonly queue?: string | undefined;
  readonly delegation?: string | undefined;
  /** Why the whole submission was refused (no description, not xRSL nor ADL, a drain). */
  readonly refused?: string | undefined;
  readonly failures?: readonly SubmitFailure[];
  /** Jobs the same submission did create (a bulk body whose other items failed). */
  readonly created?: readonly string[];
}

/** Lines shown before and after a line with a failure. */
const CONTEXT = 2;

export function submitBody(f: SubmitForm): Html {
  const m = f.mount;
  const failures = f.failures ?? [];
  const option = (v: string, chosen: string | undefined) =>
    html`<option value="${v}" ${v === chosen ? 'selected' : ''}>${v}</option>`;
  return html`<h1>Submit a job</h1>
    ${f.refused === undefined ? '' : html`<p class="error" role="alert" id="submit-refused">${f.refused}</p>`}
    ${failures.length === 0 ? '' : failureSection(f.description ?? '', failures)}
    ${
      (f.created ?? []).length === 0
        ? ''
        : html`<p class="notice">
            Created all the same:
            ${(f.created ?? []).map((id) => html`<a href="${m}/web/jobs/${id}">${id}</a> `)}
          </p>`
    }
    <form method="post" action="${m}/web/submit" enctype="multipart/form-data" class="submit-form">
      <input type="hidden" name="csrf" value="${f.csrf}" />
      <p>
        <label for="queue">Queue</label>
        <select id="queue" name="queue">
          <option value="">the description's, else the default</option>
          ${f.queues.map((q) => option(q, f.queue))}
        </select>
      </p>
      <p>
        <label for="delegation">Delegation (for data the job fetches or sends itself)</label>
        <select id="delegation" name="delegation">
          <option value="">none</option>
          ${f.delegations.map((d) => option(d, f.delegation))}
        </select>
      </p>
      <p>
        <label for="description">Job description (xRSL or ADL), at most ${f.maxDescriptionBytes} bytes</label>
        <textarea id="description" name="description" rows="12" spellcheck="false" aria-describedby="description-help">
${f.description ?? ''}</textarea
        >
        <small id="description-help">Or choose a file holding it below (not both).</small>
      </p>
      <p>
        <label for="descfile">Description file</label>
        <input id="descfile" type="file" name="descfile" />
      </p>
      <p>
        <label for="inputs">Input files (the ones the description names without a source)</label>
        <input id="inputs" type="file" name="inputs" multiple />
      </p>
      <p><button type="submit">Submit</button></p>
    </form>`;
}

/** The failures, each beside its line with the lines around it; the ones without a line first. */
function failureSection(text: string, failures: readonly SubmitFailure[]): Html {
  const lines = text.split(/\r?\n/);
  const at = new Map<number, string[]>();
  const loose: string[] = [];
  for (const f of failures) {
    if (f.line === undefined || f.line < 1 || f.line > lines.length) loose.push(f.reason);
    else at.set(f.line, [...(at.get(f.line) ?? []), f.reason]);
  }
  // The runs of lines to show: each failure's line with CONTEXT lines either side.
  const shown: number[] = [];
  for (const n of [...at.keys()].sort((a, b) => a - b))
    for (let i = Math.max(1, n - CONTEXT); i <= Math.min(lines.length, n + CONTEXT); i++)
      if (shown[shown.length - 1] === undefined || (shown[shown.length - 1] as number) < i) shown.push(i);
  return html`<section aria-labelledby="refused-h" class="refused">
    <h2 id="refused-h">The description was refused</h2>
    <ul role="alert">
      ${loose.map((r) => html`<li class="error">${r}</li>`)}
      ${[...at.entries()].map(([n, rs]) =>
        rs.map((r) => html`<li class="error"><a href="#desc-line-${n}">Line ${n}</a>: ${r}</li>`),
      )}
    </ul>
    ${
      shown.length === 0
        ? ''
        : html`<ol class="desc-lines">
            ${shown.map(
              (n, i) =>
                html`${i > 0 && shown[i - 1] !== n - 1 ? html`<li class="gap" aria-hidden="true">…</li>` : ''}<li
                    id="desc-line-${n}"
                    value="${n}"
                    class="${at.has(n) ? 'bad' : ''}"
                  >
                    <code>${lines[n - 1] ?? ''}</code>
                    ${(at.get(n) ?? []).map((r) => html`<p class="error">${r}</p>`)}
                  </li>`,
            )}
          </ol>`
    }
  </section>`;
}
