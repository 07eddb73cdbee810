/**
 * A real jobs slice for the jobs API tests: SQLite store in a temp dir, the real
 * JobService with the real description parser and acceptance checks (default config
 * plus two queues and an RTE), delegations owned per a small table, an engine that
 * only records pokes (no jobs run here: the engine has its own tests).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testApp } from '../helpers/app.js';
import { openDatabase } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { JobService } from '../../src/jobs/job-service.js';
import { JobActions } from '../../src/jobs/job-actions.js';
import { activityWriter } from '../../src/jobs/activity.js';
import { jobsResource } from '../../src/api/rest/jobs/index.js';
import { buildConfig } from '../../src/config/load.js';
import { descriptionPort } from '../../src/jobs/description-port.js';
import { REST_STATES } from '../../src/vocabulary/job-states.js';
import { SessionDirs } from '../../src/sessions/session-dirs.js';
import { sessionRecords } from '../../src/service/session-records.js';
import { ownerKeyOfStored } from '../../src/pki/rfc4514.js';
import type { Route } from '../../src/jobs/routes.js';

export const ALICE = '/DC=org/DC=test/CN=Alice';
export const BOB = '/DC=org/DC=test/CN=Bob';
export const HA = { 'x-test-dn': ALICE, accept: 'application/json' };
export const HB = { 'x-test-dn': BOB, accept: 'application/json' };

export async function jobsFixture(
  o: {
    maxIds?: number;
    maxInfoIds?: number;
    maxInstances?: number;
    draining?: (queue?: string) => string | undefined;
    routes?: () => readonly Route[];
  } = {},
) {
  const root = await mkdtemp(join(tmpdir(), 'ceres-jobsapi-'));
  const sessionRoot = join(root, 'sessions');
  await mkdir(sessionRoot);
  const db = openDatabase(join(root, 'db'));
  const store = new JobStore(db);
  const sessions = await SessionDirs.open(sessionRoot, sessionRecords(store));
  const config = buildConfig({
    cluster: {
      queues: [{ name: 'main' }, { name: 'long', maxWallTimeSeconds: 7200 }],
      runtimeEnvironments: [{ name: 'ENV/PROXY' }],
    },
  });
  const submitted: string[] = [];
  const poked: string[] = [];
  const engine = {
    jobsSubmitted: (ids: readonly string[]) => void submitted.push(...ids),
    jobPoked: (id: string) => void poked.push(id),
  };
  // Delegations are owned by the owner key, as the delegation store keys them.
  const delegationOwners = new Map<string, string>([
    ['dalice', ownerKeyOfStored(ALICE)],
    ['dbob', ownerKeyOfStored(BOB)],
  ]);
  const jobs = new JobService({
    store,
    descriptions: descriptionPort(config),
    delegations: { ownedBy: (id, owner) => delegationOwners.get(id) === owner },
    engine,
    sessions,
    maxInstances: o.maxInstances ?? 10,
    maxRerun: 5,
    initialState: { state: 'ACCEPTED', restState: 'ACCEPTING' },
    draining: o.draining,
    ...(o.routes !== undefined ? { routes: o.routes } : {}),
  });
  const actions = new JobActions(store, engine, () => activityWriter({ hostname: 'localhost' }));
  const app = testApp({
    jobs: jobsResource({
      jobs,
      actions,
      restStates: REST_STATES,
      maxIdsPerRequest: o.maxIds ?? 1000,
      ...(o.maxInfoIds !== undefined ? { maxInfoIdsPerRequest: o.maxInfoIds } : {}),
      maxControlBodyBytes: 1024 * 1024,
      maxSubmitBodyBytes: 4 * 1024 * 1024,
    }),
  });
  return {
    app,
    db,
    store,
    jobs,
    submitted,
    poked,
    sessions,
    sessionRoot,
    async submit(body: string, headers: Record<string, string> = HA, version = '1.1', query = '') {
      return app.inject({
        method: 'POST',
        url: `/arex/rest/${version}/jobs?action=new${query}`,
        headers,
        payload: body,
      });
    },
    async act(
      action: string,
      payload: string,
      headers: Record<string, string> = { ...HA, 'content-type': 'application/json' },
      version = '1.1',
    ) {
      return app.inject({ method: 'POST', url: `/arex/rest/${version}/jobs?action=${action}`, headers, payload });
    },
    async close() {
      await app.close();
      await sessions.close();
      db.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export const ECHO = '&(executable="/bin/echo")(arguments="hi")';
