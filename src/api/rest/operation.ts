/**
 * What a request does, in the four classes of the WLCG compute scopes (bearer tokens
 * need the matching scope, src/auth/token/scopes.ts):
 *
 *   create   jobs?action=new, delegations (new, renew, upload, delete), session PUT/MKCOL
 *   read     job list, jobs?action=info|status|delegations, session GET/HEAD/PROPFIND,
 *            diagnose, delegation list and action=get
 *   modify   jobs?action=restart
 *   cancel   jobs?action=kill|clean, session DELETE
 *
 * An unknown or missing action counts as `read`: the handler refuses it anyway.
 */
import type { Operation } from '../../http/caller.js';
import type { RestRoutes } from './router.js';
import type { Resource } from './resource.js';

export function operationOf(
  routes: RestRoutes,
  resource: Resource,
  method: string,
  action: string | undefined,
): Operation {
  const reads = method === 'GET' || method === 'HEAD' || method === 'PROPFIND';
  if (resource === routes.jobs) {
    if (reads) return 'read';
    switch (action) {
      case 'new':
        return 'create';
      case 'restart':
        return 'modify';
      case 'kill':
      case 'clean':
        return 'cancel';
      default:
        return 'read';
    }
  }
  if (resource === routes.session) return reads ? 'read' : method === 'DELETE' ? 'cancel' : 'create';
  if (resource === routes.delegations || resource === routes.delegation)
    return reads || action === 'get' ? 'read' : 'create';
  return 'read';
}
