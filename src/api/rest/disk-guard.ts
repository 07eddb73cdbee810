/**
 * Refuses the requests that would fill a file system below its low-water mark: job
 * submission (`POST jobs?action=new`) and session uploads (`PUT`, `PATCH`), with 507
 * CE_ERR_DISK_LOW_SPACE naming the file system, before any body is read. Everything
 * else (status, downloads, kill, clean: which frees space) goes on, and so do running jobs.
 */
import { ceError } from '../../errors/ce-error.js';
import type { RestRoutes } from './router.js';
import type { Handler, Resource, RestRequest } from './resource.js';
import { lowSpaceReason, type AreaStatus } from '../../health/disk-space.js';

export function guardDiskSpace(routes: RestRoutes, low: () => readonly AreaStatus[]): RestRoutes {
  const guard = (h: Handler | undefined, applies: (req: RestRequest) => boolean): Handler | undefined =>
    h === undefined
      ? undefined
      : (req) => {
          if (applies(req)) {
            const l = low();
            // The body is not read: the connection is closed after the answer.
            if (l.length > 0)
              throw ceError('CE_ERR_DISK_LOW_SPACE', `Insufficient Storage: ${lowSpaceReason(l)}`, {
                headers: { connection: 'close' },
              });
          }
          return h(req);
        };
  const withMethod = (r: Resource, method: string, applies: (req: RestRequest) => boolean): Resource => ({
    ...r,
    methods: { ...r.methods, [method]: guard(r.methods[method], applies) },
  });
  return {
    ...routes,
    jobs: withMethod(routes.jobs, 'POST', (req) => req.query.get('action') === 'new'),
    session: withMethod(
      withMethod(routes.session, 'PUT', () => true),
      'PATCH',
      () => true,
    ),
  };
}
