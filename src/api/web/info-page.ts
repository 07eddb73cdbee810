/**
 * The info document as a page: the GLUE2 tree the REST `info` endpoint serves (src/info,
 * the one builder), rendered for people. Read generically: every ComputingShare the
 * source gives is a queue row (a VO share or a route share included, with its policy),
 * every leaf of a share is shown, every Max/Min/Default leaf is a limit column, so a
 * new kind of share or a new field appears here without a change to this file. No I/O:
 * a document in, escaped HTML out.
 */
import { childElements, localName, textOf, type XmlElement } from '../../doc/element.js';
import { html, type Html } from './html.js';
import { duration } from './job-history.js';

/** Leaves a person does not read (ids and cross references), left out everywhere. */
const HIDDEN = new Set(['ID', 'Associations', 'BaseType', 'CreationTime', 'Validity']);
/** The share's figures the queue table leads with, when the share has them. */
const QUEUE_COLUMNS = ['MappingQueue', 'ServingState', 'RunningJobs', 'WaitingJobs', 'TotalJobs', 'FreeSlots'];
/** A limit: a leaf named Max..., Min... or Default... (GLUE2's naming of share limits). */
const LIMIT = /^(Max|Min|Default)[A-Z]/;
/** Leaves in seconds and in MB (GLUE2 units), shown with their unit. */
const SECONDS = /(WallTime|CPUTime|LifeTime)$/;
const MEGABYTES = /(MainMemory|VirtualMemory|MainMemorySize|VirtualMemorySize)$/;

/** The first element named `local` at any depth (document order). */
function find(e: XmlElement, local: string): XmlElement | undefined {
  for (const c of childElements(e)) {
    if (localName(c) === local) return c;
    const d = find(c, local);
    if (d !== undefined) return d;
  }
  return undefined;
}

const named = (e: XmlElement | undefined, local: string): XmlElement[] =>
  e === undefined ? [] : childElements(e).filter((c) => localName(c) === local);

/** An element's leaves (children without children of their own), repeated names joined, in order. */
export function leavesOf(e: XmlElement): Map<string, string> {
  const out = new Map<string, string>();
  for (const c of childElements(e)) {
    const k = localName(c);
    if (HIDDEN.has(k) || childElements(c).length > 0) continue;
    const v = textOf(c);
    const had = out.get(k);
    out.set(k, had === undefined ? v : `${had}, ${v}`);
  }
  return out;
}

/** A value with its unit where GLUE2 gives one in the name. */
function shown(name: string, value: string): string {
  const n = Number(value);
  if (value === '' || !Number.isFinite(n)) return value;
  if (SECONDS.test(name)) return `${duration(n)} (${value} s)`;
  if (MEGABYTES.test(name)) return `${value} MB`;
  return value;
}

/** `MaxWallTime` -> `Max wall time` (GLUE2 names, readable; acronyms kept). */
export function label(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
  return words.replace(/ ([A-Z][a-z]+)/g, (w) => w.toLowerCase());
}

function dl(leaves: Map<string, string>, skip: ReadonlySet<string> = new Set()): Html {
  const rows = [...leaves].filter(([k]) => !skip.has(k));
  if (rows.length === 0) return html``;
  return html`<dl>
    ${rows.map(([k, v]) => html`<dt>${label(k)}</dt><dd>${shown(k, v)}</dd>`)}
  </dl>`;
}

/** The rules of a policy element (AccessPolicy, MappingPolicy) below `e`. */
const rulesOf = (e: XmlElement, policy: string): string[] =>
  named(e, policy).flatMap((p) => named(p, 'Rule').map(textOf));

function section(id: string, title: string, body: Html): Html {
  return html`<section aria-labelledby="${id}">
    <h2 id="${id}">${title}</h2>
    ${body}
  </section>`;
}

/** A table of `rows` (name -> leaves) with the given columns; '' where a row has none. */
function table(
  caption: string,
  first: string,
  columns: readonly string[],
  rows: readonly [string, Map<string, string>][],
): Html {
  return html`<div class="table-wrap">
    <table>
      <caption>
        ${caption}
      </caption>
      <thead>
        <tr>
          <th scope="col">${first}</th>
          ${columns.map((c) => html`<th scope="col">${label(c)}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          ([name, l]) =>
            html`<tr>
              <th scope="row">${name}</th>
              ${columns.map((c) => html`<td>${shown(c, l.get(c) ?? '')}</td>`)}
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** Columns: the wanted ones the rows have, in the wanted order, then (with `more`) the others matching it. */
function columnsOf(rows: readonly Map<string, string>[], wanted: readonly string[], more?: RegExp): string[] {
  const have = new Set(rows.flatMap((r) => [...r.keys()]));
  const cols = wanted.filter((c) => have.has(c));
  if (more !== undefined) for (const k of have) if (more.test(k) && !cols.includes(k)) cols.push(k);
  return cols;
}

export function infoBody(doc: XmlElement, o: { mount: string; raw: string }): Html {
  const svc = find(doc, 'ComputingService');
  const rawLinks = html`<p>
    The same document for programs: <a href="${o.raw}">the raw info document</a> (the REST interface's rendering;
    JSON or XML with <code>Accept: application/json</code> or <code>application/xml</code>).
  </p>`;
  if (svc === undefined)
    return html`<h1>Site information</h1><p>The service publishes no ComputingService.</p>${rawLinks}`;
  const service = leavesOf(svc);
  const shares = named(svc, 'ComputingShare');
  const shareRows = shares.map((s): [string, Map<string, string>] => {
    const l = leavesOf(s);
    return [l.get('Name') ?? '', l];
  });
  const limitCols = columnsOf(
    shareRows.map(([, l]) => l),
    [],
    LIMIT,
  );
  const endpoints = named(svc, 'ComputingEndpoint');
  const manager = named(svc, 'ComputingManager')[0];
  const exec =
    manager === undefined ? [] : named(named(manager, 'ExecutionEnvironments')[0] ?? manager, 'ExecutionEnvironment');
  const apps =
    manager === undefined
      ? []
      : named(named(manager, 'ApplicationEnvironments')[0] ?? manager, 'ApplicationEnvironment');
  const appRows = apps.map((a): [string, Map<string, string>] => {
    const l = leavesOf(a);
    return [l.get('AppName') ?? '', l];
  });
  const access = [...new Set(endpoints.flatMap((e) => rulesOf(e, 'AccessPolicy')))];
  const mapping = shares
    .map((s) => [leavesOf(s).get('Name') ?? '', rulesOf(s, 'MappingPolicy')] as const)
    .filter(([, r]) => r.length > 0);
  return html`<h1>${service.get('Name') ?? 'Site information'}</h1>
    <p>What this computing element publishes about itself (its GLUE2 info document), refreshed with each load.</p>
    ${rawLinks}
    ${section('info-service', 'Service', dl(service, new Set(['Name'])))}
    ${section(
      'info-queues',
      'Queues',
      shareRows.length === 0
        ? html`<p>No queues are published.</p>`
        : html`${table(
            'Queues and shares: a share of a VO or route names its policy below',
            'Name',
            columnsOf(
              shareRows.map(([, l]) => l),
              QUEUE_COLUMNS,
            ),
            shareRows,
          )}
          ${shareRows.map(
            ([name, l]) =>
              html`<details class="share">
                <summary>All published values of ${name}</summary>
                ${dl(l, new Set(['Name']))}
              </details>`,
          )}`,
    )}
    ${section(
      'info-limits',
      'Limits',
      limitCols.length === 0
        ? html`<p>No limits are published.</p>`
        : table('Limits per queue and share', 'Name', limitCols, shareRows),
    )}
    ${section(
      'info-policies',
      'Policies',
      html`<h3>Access</h3>
        ${
          access.length === 0
            ? html`<p>No VO is named: the authorization decides who may submit.</p>`
            : html`<ul>
              ${access.map((r) => html`<li><code>${r}</code></li>`)}
            </ul>`
        }
        <h3>Mapping</h3>
        ${
          mapping.length === 0
            ? html`<p>No share carries a mapping policy.</p>`
            : html`<ul>
              ${mapping.map(([n, r]) => html`<li>${n}: ${r.map((x, i) => html`${i === 0 ? '' : ', '}<code>${x}</code>`)}</li>`)}
            </ul>`
        }`,
    )}
    ${section(
      'info-endpoints',
      'Endpoints',
      html`<div class="cards">
        ${endpoints.map((e) => {
          const l = leavesOf(e);
          return html`<section class="card">
            <h3>${l.get('InterfaceName') ?? 'Endpoint'} ${l.get('InterfaceVersion') ?? ''}</h3>
            ${dl(l, new Set(['InterfaceName', 'InterfaceVersion', 'TrustedCA']))}
            ${
              l.has('TrustedCA')
                ? html`<details>
                  <summary>Trusted CAs</summary>
                  <ul>
                    ${named(e, 'TrustedCA').map((ca) => html`<li><code>${textOf(ca)}</code></li>`)}
                  </ul>
                </details>`
                : ''
            }
          </section>`;
        })}
      </div>`,
    )}
    ${section(
      'info-manager',
      'Batch system and machines',
      html`${manager === undefined ? '' : dl(leavesOf(manager))} ${exec.map((x) => dl(leavesOf(x)))}`,
    )}
    ${section(
      'info-rtes',
      'Runtime environments',
      appRows.length === 0
        ? html`<p>None are offered.</p>`
        : table(
            'Runtime environments jobs may ask for',
            'Name',
            columnsOf(
              appRows.map(([, l]) => l),
              [],
              /^(?!AppName$)/,
            ),
            appRows,
          ),
    )}`;
}
