/**
 * The job page's "Waiting" line (docs/routes.md, "Why a job waits"): the same text as the
 * info document's OtherMessages and `ceres admin show`, in the status block the page
 * refreshes, so it stays current. Escaped as every template value (html.ts): the reason
 * carries names from the configuration and the batch system, never markup.
 */
import { html, type Html } from './html.js';

export function waitingLine(waiting: string | undefined): Html | '' {
  return waiting === undefined
    ? ''
    : html`<dt>Waiting</dt>
        <dd id="job-waiting">${waiting}</dd>`;
}
