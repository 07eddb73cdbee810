/**
 * A state directory whose service sends accounting to a fake messaging service on
 * loopback (fake-ams.ts): the service's development PKI is made first, so the fake
 * service trusts its CA and checks its signatures; `config` points the service at it.
 * Used by the end-to-end tests and the benchmark of accounting sent to APEL.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { FakeAms } from './fake-ams.js';
import { tempDir } from './service.js';

/** The published host name of these services (never the machine's). */
export const APEL_HOST = 'ce.apel-test.example';

export interface ApelSite {
  readonly dir: string;
  readonly stateDir: string;
  readonly pki: DevPki;
  readonly ams: FakeAms;
}

export async function apelSite(prefix: string): Promise<ApelSite> {
  const dir = tempDir(prefix);
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir, { recursive: true });
  const pki = await ensureDevPki(join(stateDir, 'pki'), { hostname: APEL_HOST });
  const ams = await FakeAms.start({
    cert: readFileSync(pki.files.hostCert, 'utf8'),
    key: readFileSync(pki.files.hostKey, 'utf8'),
    ca: readFileSync(pki.files.caCert, 'utf8'),
  });
  return { dir, stateDir, pki, ams };
}

export function apelConfig(
  s: ApelSite,
  apel: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    cluster: { hostname: APEL_HOST },
    accounting: {
      apel: {
        enabled: true,
        amsHost: '127.0.0.1',
        amsPort: s.ams.port,
        tokenPort: s.ams.port,
        site: 'CERES-E2E',
        intervalSeconds: 1,
        retryMinSeconds: 0.2,
        retryMaxSeconds: 1,
        timeoutSeconds: 10,
        ...apel,
      },
    },
    ...extra,
  };
}

/** Runs `fn` on the site's database (made and migrated if new), closed afterwards. */
export function withSiteDb<T>(s: ApelSite, fn: (db: Db) => T): T {
  const db = openDatabase(join(s.stateDir, 'ceres.db'));
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** The LocalJobId of every job record in `texts`. */
export function jobIdsOf(texts: readonly string[]): string[] {
  return texts.flatMap((t) => [...t.matchAll(/^LocalJobId: (\S+?)\r?$/gm)].map((m) => m[1]!));
}

/** The sum of NumberOfJobs over the records of `text`. */
export function jobsIn(text: string): number {
  return [...text.matchAll(/^NumberOfJobs: (\d+)\r?$/gm)].reduce((a, m) => a + Number(m[1]), 0);
}
