/**
 * `ceres info ldif`: the GLUE2 tree as LDIF, from `o=glue` down, built like the
 * service builds it (same configuration, same database, same renderer): what the
 * resource BDII serves. Values that the LDAP schema would refuse are left out and
 * named on standard error, with their reason. The service itself writes the same
 * LDIF to `infosys.ldap.ldifFile` for BDII's provider (docs/operations.md).
 */
import type { Command } from 'commander';
import { statfsSync } from 'node:fs';
import { join } from 'node:path';
import { listenParts } from '../config/load.js';
import { defaultPublicHost } from '../config/public-host.js';
import { createInfoSource } from '../info/info-source.js';
import { renderGlue2Ldif } from '../info/glue2-ldif.js';
import { loadTrustStore } from '../pki/trust-store.js';
import { DEV_PKI_FILES } from '../pki/dev-pki-files.js';
import { JobStore } from '../store/job-store.js';
import { Drains } from '../admin/drains.js';
import { stateLayout } from '../process/layout.js';
import { withDb, withStateOptions, globals, print } from './admin/context.js';
import { loadConfig } from '../config/load.js';

export function registerInfoCommands(program: Command): void {
  const info = withStateOptions(
    program.command('info').description("the service's GLUE2 information as other information systems take it"),
  );
  info
    .command('ldif')
    .description('print the GLUE2 tree as LDIF for a resource BDII (o=glue, GLUE2GroupID=resource)')
    .action(async (_opts: unknown, cmd: Command) => {
      const o = globals(cmd);
      const config = loadConfig(o.config, { stateDir: o.stateDir });
      const r = await withDb(o, (db, stateDir) => {
        const { host, port } = listenParts(config.listen);
        const publicHost = config.cluster.hostname ?? defaultPublicHost(host);
        const urlHost = publicHost.includes(':') ? `[${publicHost}]` : publicHost;
        const url = config.publicUrl ?? `https://${urlHost}:${port}${config.mountPoint}`;
        const layout = stateLayout(stateDir, config.sessions.root);
        const caDir = config.tls.caDir ?? join(layout.pki, DEV_PKI_FILES.certificates);
        const drains = new Drains(db);
        const source = createInfoSource({
          config,
          store: new JobStore(db, { index: 'later' }),
          endpointUrl: () => url,
          hostname: publicHost,
          sessionSpace: () => {
            const s = statfsSync(layout.sessions);
            return { totalBytes: s.blocks * s.bsize, freeBytes: s.bavail * s.bsize };
          },
          lrms: { name: config.lrms.backend },
          trustedCas: safeAnchors(caDir),
          startTime: new Date(),
          drainedQueues: () => drains.list().map((d) => d.queue),
        });
        return renderGlue2Ldif(source.document());
      });
      for (const p of r.problems) process.stderr.write(`ceres: left out: ${p}\n`);
      print(r.text);
    });
}

/** The trusted CAs' subjects; none when the folder cannot be read (the LDIF is still printed). */
function safeAnchors(caDir: string): string[] {
  try {
    return loadTrustStore(caDir).anchors.map((a) => a.subjectOneline);
  } catch {
    return [];
  }
}
