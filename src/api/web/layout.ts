/**
 * The page shell and the headers every web answer carries. The Content-Security-Policy
 * allows only this origin's own files (no inline script or style, no frames, no other
 * origin), so even a rendering mistake cannot run foreign script.
 */
import type { FastifyReply } from 'fastify';
import { html, type Html } from './html.js';
import type { Assets } from './assets.js';
import { HTML_SECURITY_HEADERS } from './headers.js';

export { HTML_SECURITY_HEADERS };

export interface Shell {
  readonly mount: string;
  readonly assets: Assets;
  readonly who?: string | undefined;
  /** A site administrator (config web.admins): the job list shows every user's jobs. */
  readonly admin?: boolean;
  /** No navigation: a caller refused as such would be refused by every page it links. */
  readonly bare?: boolean;
}

export function page(s: Shell, title: string, body: Html): Html {
  const m = s.mount;
  return html`<!DOCTYPE html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="htmx-config" content='{"includeIndicatorStyles":false,"allowEval":false}' />
        <title>${title} · Ceres</title>
        <link rel="stylesheet" href="${m}/web/static/${s.assets.css.name}" />
        <script src="${m}/web/static/${s.assets.htmx.name}" defer></script>
        <script src="${m}/web/static/${s.assets.js.name}" defer></script>
        <script src="${m}/web/static/${s.assets.live.name}" defer></script>
      </head>
      <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
          <strong>Ceres</strong>
          ${
            s.bare === true
              ? ''
              : html`<nav aria-label="Main">
            <ul>
              <li><a href="${m}/">Overview</a></li>
              <li><a href="${m}/web/jobs">${s.admin === true ? 'All jobs' : 'My jobs'}</a></li>
              <li><a href="${m}/web/submit">Submit</a></li>
              <li><a href="${m}/web/delegations">Delegations</a></li>
              <li><a href="${m}/web/info">Site information</a></li>
            </ul>
          </nav>`
          }
          ${s.who === undefined ? '' : html`<small>Signed in as <code>${s.who}</code>${s.admin === true ? ' (site administrator)' : ''}</small>`}
        </header>
        <main id="main">${body}</main>
      </body>
    </html>`;
}

export function sendPage(reply: FastifyReply, status: number, h: Html): FastifyReply {
  return reply
    .code(status)
    .headers(HTML_SECURITY_HEADERS)
    .header('content-type', 'text/html; charset=utf-8')
    .send(Buffer.from(h.text, 'utf8'));
}
