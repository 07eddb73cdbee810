/**
 * Request ids: 48 random bits as 12 lower-case hex digits, sent back in `x-request-id` and
 * written in every log line of the request, so one request's lines can be found among
 * many connections.
 *
 * The bits come from the system generator 512 ids at a time: one `randomBytes(6)` per
 * request cost ~5.7 µs on the reference machine (docs/performance.md, "status"), the
 * pooled slice ~0.1 µs. Each byte serves one id only.
 */
import { randomFillSync } from 'node:crypto';

const ID_BYTES = 6;
const pool = Buffer.alloc(ID_BYTES * 512);
let used = pool.length;

export function newRequestId(): string {
  if (used === pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const start = used;
  used += ID_BYTES;
  return pool.toString('hex', start, used);
}
