// The real service beside a local HTTP data server, for tests of server-side staging:
// transfers retried quickly (a refused or missing source fails the job in well under a
// second) and every part stopped and removed by `stop`.
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from './service.js';
import { TestServer } from '../staging/helpers/test-server.js';

export interface StagingService {
  readonly ceres: RunningCeres;
  readonly c: Client;
  readonly srv: TestServer;
  stop(): Promise<void>;
}

/** Starts the data server with `resources` (path -> body), then the service. */
export async function startStagingService(resources: Record<string, string>): Promise<StagingService> {
  const srv = await TestServer.start();
  for (const [path, body] of Object.entries(resources)) srv.resources.set(path, { body: Buffer.from(body) });
  const ceres = await startCeres({
    config: { staging: { retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 0.2, maxAttempts: 2 } } },
  });
  const c = Client.forUser(ceres);
  return {
    ceres,
    c,
    srv,
    async stop() {
      await c.close();
      await stopCeres(ceres);
      await srv.close();
      removeDir(ceres.stateDir);
    },
  };
}
