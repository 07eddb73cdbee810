/**
 * VOMS FQANs (`/vo/group/sub/Role=r/Capability=c`) and the `voms` match rule.
 *
 * Prefix semantics, by whole group names (never by characters, so `/atlas` does not
 * match `/atlasx/...`):
 *  - the rule's groups are a leading run of the FQAN's groups: `/atlas` matches every
 *    FQAN of VO atlas, `/atlas/prod` matches `/atlas/prod` and `/atlas/prod/sub`;
 *  - a rule's `Role=` (and `Capability=`) must equal the FQAN's: `/atlas/Role=production`
 *    matches `/atlas/Role=production` and `/atlas/prod/Role=production`, not `/atlas`;
 *  - `Role=NULL` and `Capability=NULL` mean "none", as VOMS writes them.
 */

export interface Fqan {
  readonly groups: readonly string[];
  readonly role?: string;
  readonly capability?: string;
}

/** Parse an FQAN or a rule; a string is the problem. */
export function parseFqanPattern(text: string): Fqan | string {
  if (!text.startsWith('/')) return `an FQAN starts with '/': ${text}`;
  const groups: string[] = [];
  let role: string | undefined;
  let capability: string | undefined;
  for (const seg of text.slice(1).split('/')) {
    if (seg === '') return `empty group name in FQAN ${text}`;
    const eq = seg.indexOf('=');
    if (eq < 0) {
      if (role !== undefined || capability !== undefined) return `group name after Role/Capability in FQAN ${text}`;
      groups.push(seg);
      continue;
    }
    const name = seg.slice(0, eq);
    const value = seg.slice(eq + 1);
    if (value === '') return `empty ${name} in FQAN ${text}`;
    if (name === 'Role' && role === undefined && capability === undefined) role = value;
    else if (name === 'Capability' && capability === undefined) capability = value;
    else return `unexpected '${seg}' in FQAN ${text} (only Role= then Capability= may follow the groups)`;
  }
  if (groups.length === 0) return `an FQAN names at least the VO: ${text}`;
  return {
    groups,
    ...(role !== undefined && role !== 'NULL' ? { role } : {}),
    ...(capability !== undefined && capability !== 'NULL' ? { capability } : {}),
  };
}

/** Whether the FQAN `f` falls under the rule `p` (see the module comment). */
export function fqanMatches(p: Fqan, f: Fqan): boolean {
  if (f.groups.length < p.groups.length) return false;
  for (let i = 0; i < p.groups.length; i++) if (p.groups[i] !== f.groups[i]) return false;
  if (p.role !== undefined && p.role !== f.role) return false;
  if (p.capability !== undefined && p.capability !== f.capability) return false;
  return true;
}
