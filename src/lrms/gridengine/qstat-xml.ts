/**
 * The poll's answer, `qstat -u '*' -xml`, read by a scanner: one walk over the text with
 * indexOf, no regular expression per field and no XML tree. At 20,000 jobs the answer is
 * 7 MB (about 360 bytes a job) and comes every poll interval: the parser that built a
 * regular expression for each field of each job took 41 ms of CPU a pass
 * (docs/performance.md, "Batch systems at scale").
 *
 * What Grid Engine 8.1.9 writes (test/lrms/gridengine-qstat-answers.ts holds real answers):
 *
 *   <job_info ...><queue_info>  <job_list state="running">…</job_list> …</queue_info>
 *                 <job_info>    <job_list state="pending">…</job_list> …</job_info></job_info>
 *
 * each `job_list` a flat list of text-only elements (`JB_job_number`, `JB_name`, `state`,
 * `queue_name`, ...). An array job is one `job_list` per running task and one for its
 * waiting range, all under one number: the first is kept (Ceres submits no array jobs).
 *
 * Invariant: an answer is whole or refused. A cut one (qstat killed mid-answer, a pipe
 * closed early) would make every job after the cut look gone from Grid Engine, and a
 * gone job is looked at as ended; so the answer must end with the root's closing tag and
 * every `job_list` must close, else the poll fails and the next interval asks again.
 */

export interface GeJob {
  readonly id: string;
  /** The state letters, e.g. `qw`, `r`, `Eqw`. */
  readonly state: string;
  /** `all.q@host` while it runs. */
  readonly queue: string;
  /** The job name (the attempt's, ./submission.ts). */
  readonly name: string;
  /** The account that submitted it (`JB_owner`): a lost submission is adopted only from its own account. */
  readonly owner: string;
}

const ROOT = '<job_info';
const ROOT_END = '</job_info>';
const JOB = '<job_list';
const JOB_END = '</job_list>';
const SLASH = 0x2f;
const GT = 0x3e;

/** The fields read, told apart by their names' lengths (13, 7, 5, 10, 8: all different). */
const ID = 'JB_job_number';
const NAME = 'JB_name';
const STATE = 'state';
const QUEUE = 'queue_name';
const OWNER = 'JB_owner';

/** Whether the character after a tag's name ends the name (`>`, `/` or white space). */
const endsName = (c: number): boolean => c === GT || c === SLASH || c === 0x20 || (c >= 0x09 && c <= 0x0d);
const isSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d);

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };

/**
 * XML's five entities and character references. Grid Engine writes a `<` in a job name as
 * `%lt;` (its own slip; the others as entities): that stays as written, since a name may
 * hold `%lt;` itself. Ceres's own job names are letters, digits and `-` (./submission.ts).
 */
export function unescapeXml(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(
    /&(?:(lt|gt|quot|apos|amp)|#(\d{1,7})|#x([0-9a-fA-F]{1,6}));/g,
    (all, e?: string, dec?: string, hex?: string) => {
      if (e !== undefined) return ENTITIES[e] ?? all;
      const code = dec !== undefined ? Number(dec) : Number.parseInt(hex ?? '', 16);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    },
  );
}

const cut = (what: string): Error => new Error(`qstat -xml answered a cut or malformed document (${what})`);

/** The jobs of a `qstat -xml` answer by id. Throws on an answer that is not whole qstat XML. */
export function parseQstatXml(xml: string): Map<string, GeJob> {
  const root = xml.indexOf(ROOT);
  if (root < 0 || !endsName(xml.charCodeAt(root + ROOT.length)))
    throw new Error(`qstat -xml answered no job_info: ${xml.slice(0, 200)}`);
  let end = xml.length;
  while (end > 0 && isSpace(xml.charCodeAt(end - 1))) end--;
  if (!xml.startsWith(ROOT_END, end - ROOT_END.length)) throw cut('no closing job_info');

  const jobs = new Map<string, GeJob>();
  let p = root + ROOT.length;
  for (;;) {
    const open = xml.indexOf(JOB, p);
    if (open < 0 || open >= end) break;
    p = open + JOB.length;
    if (!endsName(xml.charCodeAt(p))) continue; // another element whose name begins so
    const openEnd = xml.indexOf('>', p);
    if (openEnd < 0) throw cut('an unclosed job_list tag');
    p = openEnd + 1;
    if (xml.charCodeAt(openEnd - 1) === SLASH) continue; // <job_list/>: nothing in it
    let id: string | undefined;
    let name: string | undefined;
    let state: string | undefined;
    let queue: string | undefined;
    let owner: string | undefined;
    // The elements of this job_list, one tag at a time, up to its closing tag.
    for (;;) {
      const lt = xml.indexOf('<', p);
      if (lt < 0) throw cut('a job_list without its end');
      if (xml.charCodeAt(lt + 1) === SLASH) {
        if (xml.startsWith(JOB_END, lt)) {
          p = lt + JOB_END.length;
          break;
        }
        p = lt + 2; // the end of an element in it
        continue;
      }
      const gt = xml.indexOf('>', lt);
      if (gt < 0) throw cut('an unclosed tag');
      p = gt + 1;
      if (xml.charCodeAt(gt - 1) === SLASH) continue; // <x/>: an empty element, as if absent
      const len = gt - lt - 1;
      const field =
        len === ID.length
          ? ID
          : len === NAME.length
            ? NAME
            : len === STATE.length
              ? STATE
              : len === QUEUE.length
                ? QUEUE
                : len === OWNER.length
                  ? OWNER
                  : '';
      if (field === '' || !xml.startsWith(field, lt + 1)) continue;
      // Text only, up to its own closing tag (an element with children is not one of these).
      const textEnd = xml.indexOf('<', p);
      if (textEnd < 0) throw cut('a field without its end');
      if (
        xml.charCodeAt(textEnd + 1) !== SLASH ||
        !xml.startsWith(field, textEnd + 2) ||
        xml.charCodeAt(textEnd + 2 + len) !== GT
      )
        continue;
      const text = xml.slice(p, textEnd);
      p = textEnd + 3 + len;
      // The first of each counts, as in an element that repeated.
      if (field === ID) id ??= text;
      else if (field === NAME) name ??= text;
      else if (field === STATE) state ??= text;
      else if (field === QUEUE) queue ??= text;
      else owner ??= text;
    }
    if (id === undefined || state === undefined || jobs.has(id)) continue;
    jobs.set(id, {
      id,
      state,
      queue: queue ?? '',
      name: name === undefined ? '' : unescapeXml(name),
      owner: owner === undefined ? '' : unescapeXml(owner),
    });
  }
  return jobs;
}
