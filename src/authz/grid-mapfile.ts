/**
 * The grid-mapfile format: one mapping per line, `"<subject DN>" account[,account...]`.
 *  - blank lines and lines starting with `#` are ignored;
 *  - the DN is in double quotes; inside them `\"` is a quote and `\\` a backslash, any
 *    other backslash is kept as written (OpenSSL one-line DNs write non-ASCII bytes as
 *    `\xC3\xA9`, and the caller's DN is compared in that same form); an unquoted DN
 *    runs to the first blank;
 *  - the first account of the list is the one used; a DN's first valid line wins;
 *  - an account on the lines of several DNs is counted (`sharers`): those DNs would be
 *    one Unix user, which the mapping allows only for accounts declared shared;
 *  - a line that does not parse (no closing quote, no account, an account that is not a
 *    plain user name, a `.`-prefixed pool name) is skipped and reported: one bad line
 *    never disables the rest of the file.
 */

export interface GridMapProblem {
  readonly line: number;
  readonly reason: string;
}

export interface GridMap {
  /** DN (one-line form) → first account. */
  readonly accounts: ReadonlyMap<string, string>;
  /** Account → how many DNs the file maps to it. */
  readonly sharers: ReadonlyMap<string, number>;
  readonly problems: readonly GridMapProblem[];
}

export const ACCOUNT_NAME = /^[A-Za-z_][A-Za-z0-9._-]{0,31}$/;

export function parseGridMapFile(text: string): GridMap {
  const accounts = new Map<string, string>();
  const problems: GridMapProblem[] = [];
  const lines = text.split(/\r?\n/);
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const r = parseLine(line);
    if (typeof r === 'string') {
      problems.push({ line: i + 1, reason: r });
      continue;
    }
    if (!accounts.has(r.dn)) accounts.set(r.dn, r.account);
  }
  const sharers = new Map<string, number>();
  for (const a of accounts.values()) sharers.set(a, (sharers.get(a) ?? 0) + 1);
  return { accounts, sharers, problems };
}

function parseLine(line: string): { dn: string; account: string } | string {
  let dn = '';
  let rest: string;
  if (line.startsWith('"')) {
    let i = 1;
    for (; i < line.length; i++) {
      const c = line[i]!;
      if (c === '"') break;
      if (c === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) dn += line[++i];
      else dn += c;
    }
    if (i >= line.length) return 'no closing quote after the DN';
    rest = line.slice(i + 1);
    if (rest !== '' && !/^\s/.test(rest)) return 'no blank between the quoted DN and the account';
  } else {
    const m = /^(\S+)(.*)$/.exec(line)!;
    dn = m[1]!;
    rest = m[2]!;
  }
  if (dn === '') return 'empty DN';
  const first = rest.trim().split(',')[0]!.trim();
  if (first === '') return 'no account after the DN';
  if (first.startsWith('.'))
    return `pool account prefixes ('${first}') are not supported: configure a pool in the mapping`;
  if (!ACCOUNT_NAME.test(first)) return `'${first.slice(0, 40)}' is not a valid account name`;
  return { dn, account: first };
}
