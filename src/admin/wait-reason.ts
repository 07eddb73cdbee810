/**
 * Why a job waits, for `ceres admin show` (docs/routes.md, "Why a job waits"): from its
 * stored position, the configuration's limits and counts of the jobs in the database,
 * one query per limit for the one job shown. The first limit that is reached is named,
 * with its value: the route's own limits first (they hold a job even with free slots),
 * then the service's and the user's; none reached, the job waits for its turn in the
 * fair share. In the batch system, its batch state.
 */
import type { Config } from '../config/schema.js';
import type { Db } from '../store/database.js';
import type { JobRecord } from '../store/job-record.js';
import { jobClassOf } from '../engine/scheduler/share-chooser.js';

const IN_BATCH = "state IN ('SUBMIT', 'INLRMS') AND pending = 0";

export function waitReason(db: Db, config: Config, j: JobRecord): string | undefined {
  const count = (where: string, ...args: unknown[]): number =>
    (db.prepare(`SELECT count(*) AS n FROM jobs WHERE ${IN_BATCH}${where}`).get(...args) as { n: number }).n;
  const e = config.engine;
  if (j.state === 'ACCEPTED')
    return j.pending
      ? `waiting to start preparing: engine.maxPreparingJobs ${e.maxPreparingJobs} or engine.maxJobsPerUser ${e.maxJobsPerUser} reached`
      : e.maxActiveJobs > 0
        ? `waiting to be taken up (engine.maxActiveJobs ${e.maxActiveJobs})`
        : undefined;
  if (j.state === 'PREPARING' && !j.pending)
    return 'preparing: its input files are being downloaded or uploaded by the client';
  if (j.state === 'PREPARING') {
    const cls = jobClassOf(j);
    const route = config.routes.find((r) => r.name === cls.route);
    const ofRoute = " AND json_extract(route, '$.name') = ?";
    if (route?.maxRunning !== undefined) {
      const n = count(ofRoute, cls.route);
      if (n >= route.maxRunning)
        return `held by route ${cls.route} maxRunning ${route.maxRunning} (${n} in the batch system)`;
    }
    if (route?.maxRunningPerVo !== undefined) {
      const n =
        cls.vo === ''
          ? count(`${ofRoute} AND fqans IS NULL`, cls.route)
          : count(
              `${ofRoute} AND (json_extract(fqans, '$[0]') = ? OR json_extract(fqans, '$[0]') LIKE ?)`,
              cls.route,
              `/${cls.vo}`,
              `/${cls.vo}/%`,
            );
      if (n >= route.maxRunningPerVo)
        return `held by route ${cls.route} maxRunningPerVo ${route.maxRunningPerVo} for VO ${cls.vo || '(none)'} (${n} in the batch system)`;
    }
    const all = count('');
    if (e.maxRunningJobs > 0 && all >= e.maxRunningJobs)
      return `waiting for a batch slot: engine.maxRunningJobs ${e.maxRunningJobs} reached`;
    const mine = count(' AND owner = ?', j.owner);
    if (e.maxRunningJobsPerUser > 0 && mine >= e.maxRunningJobsPerUser)
      return `held by engine.maxRunningJobsPerUser ${e.maxRunningJobsPerUser} (${mine} of this user's in the batch system)`;
    return `waiting for its turn (fairShare.by ${config.fairShare.by})`;
  }
  if (j.state === 'INLRMS' && j.lrmsState !== null && j.lrmsState !== 'RUNNING')
    return `in the batch system: ${j.lrmsState}`;
  return undefined;
}
