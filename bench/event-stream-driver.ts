/**
 * A change driver inside the measured service, for event-stream-follow.bench.ts: loaded
 * into the service's process with `node --import` (never by the service itself), it takes
 * the service's own connection to its database and makes the bench's state changes
 * through it, so that they reach the streams as the engine's do: the job store's write
 * signal wakes the feed (src/store/event-signal.ts) and the feed reads pages that the
 * same connection just wrote. Changes made from a second connection (the bench's other
 * way) are seen only by the safety-net poll, and every read after one finds the
 * connection's page cache discarded: a cost that a service never pays for its own changes.
 *
 * Control: a plain HTTP listener on loopback, its port written to `bench-driver.port`
 * beside the database once the service opened it. `POST /drive` with
 * {"ids": [...], "ms": N, "tickMs": N} makes one change per id, evenly over `ms`
 * (event-stream-changes.ts `drive`), and answers {"changed": N, "driverCpuUs": N}; the
 * first request, with no ids, only makes the driver's job store.
 */
import { createServer } from 'node:http';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { JobStore } from '../src/store/job-store.js';
import { drive, flip } from './event-stream-changes.js';

let store: JobStore | undefined;
let db: Database.Database | undefined;

// The service opens its database with `new Database(file)` and sets its pragmas at once:
// the first connection to a file named ceres.db is the service's.
const pragma = Reflect.get(Database.prototype, 'pragma') as (this: Database.Database, ...a: unknown[]) => unknown;
Reflect.set(Database.prototype, 'pragma', function (this: Database.Database, ...args: unknown[]) {
  capture(this);
  return pragma.apply(this, args);
});

function capture(c: Database.Database): void {
  if (db !== undefined || !c.name.endsWith('ceres.db')) return;
  db = c;
  listen(dirname(c.name));
}

function listen(dir: string): void {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const m = JSON.parse(body) as { ids: string[]; ms: number; tickMs?: number };
      // Made at the first request (the bench sends an empty one before it measures): the
      // service has migrated the database by then.
      store ??= new JobStore(db!);
      const s = store;
      if (m.ids.length === 0) return void res.end(JSON.stringify({ changed: 0, driverCpuUs: 0 }));
      drive(m.ids, m.ms, (id) => flip(s, id), m.tickMs).then(
        (r) => res.end(JSON.stringify(r)),
        (e: Error) => {
          res.statusCode = 500;
          res.end(e.message);
        },
      );
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    if (a !== null && typeof a === 'object') writeFileSync(join(dir, 'bench-driver.port'), String(a.port));
  });
  server.unref();
}
