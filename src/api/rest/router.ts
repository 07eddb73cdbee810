/**
 * Routing of `{service}/rest/...` per spec §4 and A-REX's answers (A-REX §2):
 *
 *   rest | rest/                         versions            (public)
 *   rest/<v>                              404 Not Found
 *   rest/<v>/info                         info                (public)
 *   rest/<v>/jobs                         jobs collection
 *   rest/<v>/jobs/<id>                    404 Missing job sub-resource
 *   rest/<v>/jobs/<id>/session[/<path>]   session files
 *   rest/<v>/jobs/<id>/diagnose/<name>    control files
 *   rest/<v>/jobs/<id>/<other>            404 Wrong job sub-resource requested
 *   rest/<v>/delegations                  delegation collection
 *   rest/<v>/delegations/<id>             one delegation
 *   anything else under rest/<v>/         404 Functionality Not Supported
 *
 * <v> is exactly 1.0 or 1.1 (else 404 Version Not Supported). Paths are
 * case-sensitive. Segments stay percent-encoded here; resources decode them.
 */
import { ceError } from '../../errors/ce-error.js';
import { API_VERSIONS, type ApiVersion, type Resource } from './resource.js';

export interface RestRoutes {
  versions: Resource;
  info: Resource;
  jobs: Resource;
  session: Resource;
  diagnose: Resource;
  delegations: Resource;
  delegation: Resource;
}

export interface Match {
  resource: Resource;
  version: ApiVersion | undefined;
  /** Segments after the fixed part: [jobId, ...path] for session, [jobId, name] for diagnose, [id] for delegation. */
  rest: string[];
}

/** `segments`: the path below `{service}/rest`, split on '/', leading empty element removed. */
export function route(routes: RestRoutes, segments: readonly string[]): Match {
  const [v, fn, ...more] = segments;
  if (v === undefined || (v === '' && segments.length === 1))
    return { resource: routes.versions, version: undefined, rest: [] };
  if (!(API_VERSIONS as readonly string[]).includes(v)) throw ceError('CE_ERR_HTTP_VERSION_NOT_SUPPORTED');
  const version = v as ApiVersion;
  if (fn === undefined || fn === '') throw ceError('CE_ERR_HTTP_NOT_FOUND');
  const tail = trimTrailingEmpty(more);
  switch (fn) {
    case 'info':
      if (tail.length) throw ceError('CE_ERR_HTTP_NOT_FOUND');
      return { resource: routes.info, version, rest: [] };
    case 'delegations':
      if (tail.length === 0) return { resource: routes.delegations, version, rest: [] };
      if (tail.length === 1) return { resource: routes.delegation, version, rest: tail };
      throw ceError('CE_ERR_HTTP_NOT_FOUND');
    case 'jobs': {
      if (tail.length === 0) return { resource: routes.jobs, version, rest: [] };
      const [id, sub, ...path] = more;
      if (sub === undefined || sub === '') throw ceError('CE_ERR_JOB_MISSING_SUBRESOURCE');
      if (sub === 'session') return { resource: routes.session, version, rest: [id as string, ...path] };
      if (sub === 'diagnose') {
        const p = trimTrailingEmpty(path);
        if (p.length !== 1) throw ceError('CE_ERR_SESSION_DIAGNOSE_UNKNOWN');
        return { resource: routes.diagnose, version, rest: [id as string, p[0] as string] };
      }
      throw ceError('CE_ERR_JOB_WRONG_SUBRESOURCE');
    }
    default:
      throw ceError('CE_ERR_HTTP_FUNCTIONALITY_NOT_SUPPORTED');
  }
}

function trimTrailingEmpty(a: readonly string[]): string[] {
  const r = [...a];
  while (r.length && r[r.length - 1] === '') r.pop();
  return r;
}
