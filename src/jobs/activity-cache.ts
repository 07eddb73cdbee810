/**
 * Activity documents of unchanged jobs, kept as written. Clients ask `action=info` for the
 * same jobs again and again (arcstat for all of a user's jobs, aCT for its finished ones),
 * and most of them have not changed since: an ended job never changes again. Reading the
 * row, parsing its description and writing the document again cost the bulk of an info
 * answer (docs/performance.md).
 *
 * An entry holds the document's content (JSON members, XML children: the root, whose
 * CreationTime is the answer's, is written per answer) and what it was written from: the
 * job record's version and the expiry of its delegation. The store bumps a record's version
 * with every change (JobStore.update, compare-and-set), and a delegation's expiry changes
 * only when it is renewed; an entry is used only while both are what they were, so a
 * cached document is byte for byte the one the record would give now.
 *
 * Bounded: at most `maxEntries` (least recently used out first), each about 1-3 KB.
 */
export interface CachedActivity {
  readonly version: number;
  readonly delegationId: string | null;
  readonly expiryMs: number | undefined;
  /**
   * A waiting job's reason as written, and what it is read from (wait-reason.ts): it can
   * change while the record does not, so the entry is used only while it reads the same.
   */
  readonly waiting?: { readonly job: WaitJob; readonly why: string | undefined };
  json?: string;
  xml?: string;
}

import type { WaitJob } from './wait-reason.js';

export class ActivityCache {
  readonly #entries = new Map<string, CachedActivity>();

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The entry of `id` if it was written from `version`; refreshes its place. */
  get(id: string, version: number): CachedActivity | undefined {
    const e = this.#entries.get(id);
    if (e === undefined) return undefined;
    this.#entries.delete(id);
    if (e.version !== version) return undefined;
    this.#entries.set(id, e);
    return e;
  }

  set(id: string, e: CachedActivity): void {
    if (this.maxEntries <= 0) return;
    this.#entries.delete(id);
    this.#entries.set(id, e);
    if (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
  }
}
