/**
 * Match rules compiled once from the configuration into predicates over a caller
 * (src/authz/subject.ts). Each rule kind matches one kind of caller: certificate rules
 * never match a token and token rules never match a certificate.
 */
import type { Config } from '../config/schema.js';
import type { AuthzSubject } from './subject.js';
import type { WatchedGridMaps } from './watched-files.js';
import { compileGlob } from './glob.js';
import { fqanMatches, parseFqanPattern } from '../auth/voms/fqan.js';

export type MatchRule = NonNullable<Config['authorization']>['groups'][number]['match'][number];
export type Matcher = (s: AuthzSubject) => boolean;

export function compileRule(r: MatchRule, files: Pick<WatchedGridMaps, 'get'>): Matcher {
  if (r.all === true) return () => true;
  if (r.subject !== undefined) {
    const dn = r.subject;
    return (s) => s.kind === 'x509' && s.dn === dn;
  }
  if (r.subjectPattern !== undefined) {
    const m = compileGlob(r.subjectPattern);
    return (s) => s.kind === 'x509' && m(s.dn);
  }
  if (r.issuer !== undefined) {
    const ca = r.issuer;
    return (s) => s.kind === 'x509' && s.issuerDn === ca;
  }
  if (r.gridMapFile !== undefined) {
    const path = r.gridMapFile;
    return (s) => s.kind === 'x509' && files.get(path).accounts.has(s.dn);
  }
  if (r.voms !== undefined) {
    const p = parseFqanPattern(r.voms);
    if (typeof p === 'string') throw new Error(p); // refused at config load
    return (s) => s.kind === 'x509' && s.parsedFqans.some((f) => fqanMatches(p, f));
  }
  if (r.token !== undefined) {
    const t = r.token;
    return (s) =>
      s.kind === 'token' &&
      s.issuer === t.issuer &&
      (t.subject === undefined || s.subject === t.subject) &&
      (t.scope === undefined || s.scopes.includes(t.scope)) &&
      (t.group === undefined || s.groups.includes(t.group));
  }
  throw new Error('empty match rule'); // refused at config load
}

/** Authorization groups: the caller is in a group when any of its rules matches. */
export class Groups {
  readonly #groups: { name: string; match: Matcher[] }[];

  constructor(config: Config['authorization'], files: Pick<WatchedGridMaps, 'get'>) {
    this.#groups = (config?.groups ?? []).map((g) => ({
      name: g.name,
      match: g.match.map((r) => compileRule(r, files)),
    }));
  }

  /** Names of the groups the caller is in, in configuration order. */
  of(s: AuthzSubject): string[] {
    return this.#groups.filter((g) => g.match.some((m) => m(s))).map((g) => g.name);
  }
}
