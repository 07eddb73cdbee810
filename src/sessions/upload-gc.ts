/**
 * Keeps the buffers of upload bodies from costing full garbage collections.
 *
 * Node's HTTP parser hands every piece of a request body to JavaScript as a fresh Buffer
 * (one per TLS record, at most 16 KiB): 65,536 of them per GiB uploaded. They die within
 * milliseconds, but their memory lives outside the JS heap and is given back only when
 * the collector has seen them die. V8 counts such memory allocated since its last full
 * collection against the old generation's limit, and collects the young generation for
 * it only every 32 MiB; with the service's heap policy (`--heap-growing-percent=50` in
 * bin/ceres: a limit ~half the live heap above it) the limit is reached first, and V8
 * starts a full mark-compact of the whole service heap every 30–60 MiB uploaded: ~35
 * per GiB, about a second of CPU per GiB spread over the main thread and V8's helper
 * threads (measured with `--trace-gc`; docs/performance.md, "transfer").
 *
 * A young-generation collection every `EVERY_BYTES` of body received across all uploads
 * frees those buffers while they are still young (a collection of an almost empty young
 * generation takes a fraction of a millisecond), so the external memory never piles up to
 * the limit. The hook is V8's own `gc({ type: 'minor' })`, reached without exposing
 * `gc` to the service's code: the flag is set at run time, which makes the function
 * exist only in contexts created afterwards, and one such context is made to fetch it.
 * Where that is not available the hook is a no-op (uploads are then only slower).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Body bytes between two young-generation collections (an eighth of V8's own 32 MiB). With
 * the spare batches of spare-batches.ts, 4 MiB instead of 8 took the full collections of a
 * 1 GiB upload from 12–52 to 1–4 where the writes were slow, for ~128 more collections of a
 * fraction of a millisecond each (docs/performance.md, "Uploads").
 */
export const EVERY_BYTES = 4 * 1024 * 1024;

type MinorGc = () => void;

let minor: MinorGc | null | undefined;
let sinceLast = 0;

function minorGc(): MinorGc | null {
  if (minor !== undefined) return minor;
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as
      ((o: { type: 'minor' | 'major' }) => void) | undefined;
    minor = gc === undefined ? null : () => gc({ type: 'minor' });
  } catch {
    minor = null;
  }
  return minor;
}

/** Counts `n` bytes of upload body received; collects the young generation every `EVERY_BYTES`. */
export function bodyBytesReceived(n: number): void {
  sinceLast += n;
  if (sinceLast < EVERY_BYTES) return;
  sinceLast = 0;
  minorGc()?.();
}
