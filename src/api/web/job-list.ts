/**
 * The job list: its query (what the address may say, checked), the links that keep it
 * (sort headers, pages, polling), and its rows. Users know their jobs by name, so the name
 * leads each row; exit code, end and duration tell how a job went without opening it.
 * Administrators also see owner, account and VO and can filter by each.
 */
import { ceError } from '../../errors/ce-error.js';
import { JOB_SORTS, sortValue, voOf, type JobPageRow, type JobQuery, type JobSort } from '../../store/job-pages.js';
import { html, type Html } from './html.js';
import { duration } from './job-history.js';
import { liveAttributes, when, type LiveSource } from './pages.js';

/** The list's own parameters, as given (checked), to rebuild its links. */
export interface ListParams {
  readonly state?: string | undefined;
  readonly q?: string | undefined;
  readonly sort?: JobSort | undefined;
  readonly user?: string | undefined;
  readonly account?: string | undefined;
  readonly vo?: string | undefined;
}

const MAX_SEARCH = 200;
/** An administrator filter: a DN or account name, one line. */
const MAX_FILTER = 1024;
/** VO names are DNS-like (VOMS): nothing else can match. */
const VO_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;
const SORTS = Object.keys(JOB_SORTS) as JobSort[];
const ADMIN_FILTERS = ['user', 'account', 'vo'] as const;

const bad = (detail: string) => ceError('CE_ERR_HTTP_BAD_QUERY', detail);
const given = (v: string | undefined): string | undefined =>
  v === undefined || v.trim() === '' ? undefined : v.trim();

/** The list's parameters from the query, or a 400 naming the one that is wrong. */
export function parseListQuery(
  query: Readonly<Record<string, string | undefined>>,
  restStates: readonly string[],
  admin: boolean,
): { params: ListParams; after: JobQuery['after'] } {
  const state = given(query.state);
  if (state !== undefined && !restStates.includes(state))
    throw ceError('CE_ERR_JOB_BAD_STATE_FILTER', `unknown job state (known: ${restStates.join(', ')})`);
  const q = given(query.q);
  if (q !== undefined && q.length > MAX_SEARCH) throw bad(`q: a search text of at most ${MAX_SEARCH} characters`);
  const sortRaw = given(query.sort);
  if (sortRaw !== undefined && !(SORTS as string[]).includes(sortRaw)) throw bad(`sort: one of ${SORTS.join(', ')}`);
  const sort = sortRaw as JobSort | undefined;
  for (const f of ADMIN_FILTERS) {
    const v = given(query[f]);
    if (v === undefined) continue;
    if (!admin) throw bad(`${f}: only site administrators filter by owner, account or VO`);
    if (v.length > MAX_FILTER || [...v].some((ch) => ch.charCodeAt(0) < 0x20))
      throw bad(`${f}: one line of at most ${MAX_FILTER} characters`);
  }
  const vo = given(query.vo);
  if (vo !== undefined && !VO_NAME.test(vo)) throw bad('vo: a VO name (letters, digits, dot, dash, underscore)');
  const params: ListParams = { state, q, sort, user: given(query.user), account: given(query.account), vo };
  return { params, after: parseAfter(query.after, sort ?? 'submitted') };
}

/** `after`: base64url of the JSON `[value, id]` of the last row shown (any name survives the address). */
function parseAfter(raw: string | undefined, sort: JobSort): JobQuery['after'] {
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    if (raw.length > 2048) throw new Error('long');
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    v = undefined;
  }
  const want = sort === 'name' ? 'string' : 'number';
  if (
    !Array.isArray(v) ||
    v.length !== 2 ||
    typeof v[0] !== want ||
    typeof v[1] !== 'string' ||
    !/^[A-Za-z0-9]{1,64}$/.test(v[1]) ||
    (typeof v[0] === 'number' && !Number.isSafeInteger(v[0]))
  )
    throw bad('after: not a page position of this list (follow the page links)');
  return { value: v[0] as number | string, id: v[1] };
}

export function afterOf(sort: JobSort | undefined, r: JobPageRow): string {
  return Buffer.from(JSON.stringify([sortValue(sort ?? 'submitted', r), r.id]), 'utf8').toString('base64url');
}

/** The list's address with `p` and `extra` (empty values left out). */
export function listHref(mount: string, p: ListParams, extra: Record<string, string | undefined> = {}): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...p, ...extra })) if (v !== undefined && v !== '') s.set(k, v);
  const qs = s.toString();
  return `${mount}/web/jobs${qs === '' ? '' : `?${qs}`}`;
}

/** How long the job ran (or has run so far), from its batch start; '' before it started. */
function ran(r: JobPageRow, now: number): string {
  if (r.startedAt === null) return '';
  return duration(Math.max(0, ((r.endedAt ?? now) - r.startedAt) / 1000)) + (r.endedAt === null ? ' so far' : '');
}

const vosOf = (fqans: string | null): string => {
  if (fqans === null) return '';
  try {
    const list = JSON.parse(fqans) as unknown;
    return Array.isArray(list) ? [...new Set(list.map((f) => voOf(String(f))))].join(' ') : '';
  } catch {
    return '';
  }
};

/** The list's rows; `all`: every owner's jobs (the administrator's list), with owner, account and VO. */
export function jobRows(mount: string, rows: readonly JobPageRow[], all = false, now = Date.now()): Html {
  if (rows.length === 0)
    return html`<tr>
      <td colspan="${all ? 10 : 7}">No jobs.</td>
    </tr>`;
  return html`${rows.map(
    (r) =>
      html`<tr>
        <td class="name"><a href="${mount}/web/jobs/${r.id}">${r.name === '' ? r.id : r.name}</a></td>
        <td class="id wide">${r.id}</td>
        <td class="state state-${r.state}">${r.state}</td>
        <td>${r.exitCode ?? ''}</td>
        ${all ? html`<td class="owner">${r.owner}</td><td class="wide">${r.localAccount ?? ''}</td><td class="wide">${vosOf(r.fqans)}</td>` : ''}
        <td class="wide">${when(r.createdAt)}</td>
        <td>${when(r.endedAt)}</td>
        <td class="wide">${ran(r, now)}</td>
      </tr>`,
  )}`;
}

export function jobListBody(o: {
  mount: string;
  states: readonly string[];
  params: ListParams;
  rows: readonly JobPageRow[];
  next: string | undefined;
  first: boolean;
  after: string | undefined;
  all?: boolean;
  /** The event stream the list follows (absent: it polls). */
  live?: LiveSource | undefined;
}): Html {
  const all = o.all === true;
  const p = o.params;
  const sort = p.sort ?? 'submitted';
  const fragment = listHref(o.mount, p, { after: o.after, fragment: 'rows' });
  const sortHead = (key: JobSort, label: string, wide = false) => {
    const on = key === sort;
    return html`<th
      scope="col"
      ${wide ? html`class="wide"` : ''}
      ${on ? html`aria-sort="${JOB_SORTS[key].desc ? 'descending' : 'ascending'}"` : ''}
    >
      ${on ? label : html`<a href="${listHref(o.mount, { ...p, sort: key === 'submitted' ? undefined : key })}">${label}</a>`}
    </th>`;
  };
  const plain = (label: string, wide = false) =>
    wide ? html`<th scope="col" class="wide">${label}</th>` : html`<th scope="col">${label}</th>`;
  const field = (id: string, label: string, value: string | undefined, type = 'text') =>
    html`<span><label for="${id}">${label}</label> <input id="${id}" name="${id}" type="${type}" value="${value ?? ''}" /></span>`;
  return html`<h1>${all ? 'All jobs' : 'My jobs'}</h1>
    ${all ? html`<p>You are a site administrator: every user's jobs are listed.</p>` : ''}
    <form method="get" action="${o.mount}/web/jobs" class="actions" role="search">
      ${field('q', 'Name or id', p.q, 'search')}
      <span
        ><label for="state">State</label>
        <select id="state" name="state">
          <option value="">all</option>
          ${o.states.map((s) => html`<option value="${s}" ${s === p.state ? 'selected' : ''}>${s}</option>`)}
        </select></span
      >
      ${all ? html`${field('user', 'Owner', p.user)}${field('account', 'Account', p.account)}${field('vo', 'VO', p.vo)}` : ''}
      ${p.sort === undefined ? '' : html`<input type="hidden" name="sort" value="${p.sort}" />`}
      <button type="submit">Filter</button>
    </form>
    <div class="table-wrap">
      <table>
        <caption>
          ${sort === 'name' ? 'By name' : sort === 'ended' ? 'Most recently ended first' : 'Newest first'}; updates as
          jobs change
        </caption>
        <thead>
          <tr>
            ${sortHead('name', 'Name')}${plain('Job id', true)}${plain('State')}${plain('Exit code')}
            ${all ? html`${plain('Owner')}${plain('Account', true)}${plain('VO', true)}` : ''}
            ${sortHead('submitted', 'Submitted', true)}${sortHead('ended', 'Ended')}${plain('Duration', true)}
          </tr>
        </thead>
        <tbody id="job-rows" data-refresh="${fragment}" data-poll="3000" ${liveAttributes(o.live)}>
          ${jobRows(o.mount, o.rows, all)}
        </tbody>
      </table>
    </div>
    <nav aria-label="Pages" class="actions">
      ${o.first ? '' : html`<a href="${listHref(o.mount, p)}">First page</a>`}${o.next === undefined ? '' : html`<a href="${listHref(o.mount, p, { after: o.next })}" rel="next">Next page</a>`}
    </nav>`;
}
