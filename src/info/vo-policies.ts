/**
 * The GLUE2 policies derived from the authorization configuration, as ARC peers
 * publish theirs: a rule `vo:NAME` for each VO that a `voms` match rule names (the
 * first component of its FQAN prefix: `/atlas/prod` admits members of `atlas`).
 * Endpoints get the VOs of the groups in `authorization.allow`; a queue those of its
 * own `allow` groups (else the service's), each as a share with a MappingPolicy.
 * Other rules (subjects, grid-mapfiles, tokens) name no VO and add no rule: a policy
 * describes whom the site advertises to, the authorization still decides.
 */
import type { Config } from '../config/schema.js';

type Authorization = NonNullable<Config['authorization']>;

export interface VoPolicies {
  /** Rules of every endpoint's AccessPolicy. */
  readonly accessRules: readonly string[];
  /** The VOs of each queue (a share and MappingPolicy each). */
  readonly queueVos: ReadonlyMap<string, readonly string[]>;
}

function vosOf(a: Authorization, groups: readonly string[]): string[] {
  const out = new Set<string>();
  for (const g of a.groups)
    if (groups.includes(g.name))
      for (const r of g.match) {
        const vo = r.voms?.split('/')[1];
        if (vo !== undefined && vo !== '') out.add(vo);
      }
  return [...out];
}

export function voPolicies(
  a: Config['authorization'],
  queues: readonly { readonly name: string; readonly allow?: readonly string[] | undefined }[],
): VoPolicies {
  if (a === undefined) return { accessRules: [], queueVos: new Map() };
  const serviceVos = vosOf(a, a.allow);
  return {
    accessRules: serviceVos.map((vo) => `vo:${vo}`),
    queueVos: new Map(queues.map((q) => [q.name, q.allow === undefined ? serviceVos : vosOf(a, q.allow)])),
  };
}
