/**
 * A real service slice for the session and diagnose tests: a SQLite job store in a
 * temp dir, the real JobService (its other ports are inert), a real control directory,
 * and the Fastify app with the session and diagnose resources (callers from the
 * test-only `x-test-dn` header). `listen()` gives a real HTTP/1.1 port for socket tests.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { testApp, testRoutes } from '../helpers/app.js';
import { guardDiskSpace } from '../../src/api/rest/disk-guard.js';
import type { AreaStatus } from '../../src/health/disk-space.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { JobStore } from '../../src/store/job-store.js';
import { JobService } from '../../src/jobs/job-service.js';
import { ControlDir } from '../../src/store/control-dir.js';
import { newJobId } from '../../src/jobs/job-id.js';
import { newJobRow } from '../helpers/new-job.js';
import { ownerKeyOfStored } from '../../src/pki/rfc4514.js';
import { SessionFiles } from '../../src/sessions/session-files.js';
import { UploadTracker, type UploadTrackerOptions } from '../../src/sessions/upload-tracker.js';
import { sessionResource } from '../../src/api/rest/session/index.js';
import { SessionDirs } from '../../src/sessions/session-dirs.js';
import type { SessionOwner } from '../../src/fs/session-owner.js';
import { diagnoseResource, type DiagnoseRenderer } from '../../src/api/rest/diagnose/index.js';

export const ALICE = '/DC=org/DC=test/CN=Alice';
export const BOB = '/DC=org/DC=test/CN=Bob';
export const A = { 'x-test-dn': ALICE, host: 'localhost:8443' };
export const B = { 'x-test-dn': BOB };

export interface FixtureOptions {
  readonly render?: DiagnoseRenderer;
  readonly tracker?: UploadTrackerOptions;
  readonly maxFileBytes?: number;
  readonly maxUploadBytesPerJob?: number;
  /** The file systems below their low-water mark, read per request (absent: no guard). */
  readonly diskLow?: () => readonly AreaStatus[];
  readonly maxListingEntries?: number;
  /** What the session resource leases directories through (default: the fixture's SessionDirs). */
  readonly lease?: (sessions: SessionDirs) => Pick<SessionDirs, 'withRoot'>;
}

export async function makeFixture(o: FixtureOptions = {}) {
  const root = await mkdtemp(join(tmpdir(), 'ceres-sessions-'));
  const sessionRoot = join(root, 'session');
  await mkdir(sessionRoot, { mode: 0o700 });
  const sessions = await SessionDirs.open(sessionRoot);
  const db: Db = openDatabase(join(root, 'jobs.db'));
  const store = new JobStore(db);
  const pokes: string[] = [];
  const engine = { jobsSubmitted: () => undefined, jobPoked: (id: string) => void pokes.push(id) };
  const jobs = new JobService({
    store,
    descriptions: {
      split: () => ({ multi: false, items: [] }),
      accept: () => ({ ok: false, status: 500, reason: 'unused' }),
    },
    delegations: { ownedBy: () => false },
    engine,
    sessions,
    maxInstances: 1,
    maxRerun: 0,
    initialState: { state: 'ACCEPTED', restState: 'ACCEPTING' },
  });
  const control = new ControlDir(join(root, 'control'));
  const files = new SessionFiles({
    control,
    engine,
    tracker: new UploadTracker(o.tracker),
    jobExists: (id) => store.has(id),
    ...(o.maxFileBytes === undefined ? {} : { maxFileBytes: o.maxFileBytes }),
    ...(o.maxUploadBytesPerJob === undefined ? {} : { maxUploadBytesPerJob: o.maxUploadBytesPerJob }),
  });
  const routes = {
    session: sessionResource({
      jobs,
      sessions: o.lease?.(sessions) ?? sessions,
      files,
      ...(o.maxListingEntries === undefined ? {} : { maxListingEntries: o.maxListingEntries }),
    }),
    diagnose: diagnoseResource({ jobs, control, ...(o.render ? { render: o.render } : {}) }),
  };
  // The disk low-water guard in front, as the service has it (src/api/rest/disk-guard.ts).
  const app = testApp(o.diskLow === undefined ? routes : guardDiskSpace(testRoutes(routes), o.diskLow));
  let port: number | undefined;

  return {
    root,
    app,
    store,
    jobs,
    sessions,
    control,
    files,
    pokes,
    /** A new job of `owner` (one-line DN) with an empty session directory, as submission leaves it. */
    async newJob(owner: string, account?: SessionOwner): Promise<string> {
      const id = newJobId();
      const sessionIdent = sessions.createSync(id, account);
      // Stored as submission stores it: keyed on the owner key, the one-line DN shown.
      store.insertMany([newJobRow(id, ownerKeyOfStored(owner), { sessionIdent, ownerDn: owner })]);
      return id;
    },
    sessionDir: (id: string) => jobs.sessionDir(id),
    url: (id: string, path = '', version = '1.1') =>
      `/arex/rest/${version}/jobs/${id}/session${path === '' ? '' : `/${path}`}`,
    diag: (id: string, name: string) => `/arex/rest/1.1/jobs/${id}/diagnose/${name}`,
    async listen(): Promise<number> {
      if (port === undefined) {
        await app.listen({ port: 0, host: '127.0.0.1' });
        port = (app.server.address() as AddressInfo).port;
      }
      return port;
    },
    async close(): Promise<void> {
      await app.close();
      await sessions.close();
      db.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export type Fixture = Awaited<ReturnType<typeof makeFixture>>;

export interface RawResponse {
  readonly status: number;
  readonly reason: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
  /** Every status line received, interim (1xx) ones included, in order. */
  readonly statusLines: string[];
}

/**
 * Sends `head` (request line + headers, CRLF-separated, no final blank line) and
 * `body` over a fresh socket with `Connection: close`, and parses the answer. The
 * request target is sent byte for byte (no URL normalisation, unlike inject).
 */
export function rawRequest(port: number, head: string, body?: Buffer | string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      try {
        resolve(parseRaw(Buffer.concat(chunks)));
      } catch (e) {
        reject(e);
      }
    });
    sock.write(`${head}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    if (body !== undefined) sock.write(body);
  });
}

export function parseRaw(all: Buffer): RawResponse {
  const statusLines: string[] = [];
  let rest = all;
  for (;;) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`incomplete response: ${rest.toString('latin1').slice(0, 200)}`);
    const head = rest.subarray(0, end).toString('latin1').split('\r\n');
    const statusLine = head[0] ?? '';
    statusLines.push(statusLine);
    rest = rest.subarray(end + 4);
    const m = /^HTTP\/1\.1 (\d{3}) ?(.*)$/.exec(statusLine);
    if (!m) throw new Error(`bad status line ${statusLine}`);
    const status = Number(m[1]);
    if (status >= 100 && status < 200) continue;
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(':');
      headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
    }
    const cl = headers['content-length'];
    const body = cl === undefined ? rest : rest.subarray(0, Number(cl));
    return { status, reason: m[2] ?? '', headers, body, statusLines };
  }
}
