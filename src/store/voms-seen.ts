/**
 * "Identity X last authenticated with a verified VOMS attribute certificate holding FQAN F
 * at T" (table `voms_seen`, migration 17), for the web's browser rule: a browser presents
 * the plain certificate, never a proxy, so a VO member is admitted to the pages for a
 * window after their proxy was last seen (src/service/authorization.ts,
 * docs/security.md). Bounded: one row per (owner, FQAN), and rows older than the window
 * are pruned whenever one is written, so a table never holds more than the identities
 * seen within one window.
 *
 * Only FQANs of an AC that verified (src/auth/voms) reach here; the owner key is the
 * certificate subject (an unambiguous form), never a proxy's.
 */
import type { Db } from './database.js';

export class VomsSeen {
  readonly #upsert;
  readonly #prune;
  readonly #recent;

  constructor(db: Db) {
    this.#upsert = db.prepare(
      'INSERT INTO voms_seen (owner, fqan, seen_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT (owner, fqan) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)',
    );
    this.#prune = db.prepare('DELETE FROM voms_seen WHERE seen_at < ?');
    this.#recent = db.prepare(
      'SELECT fqan, seen_at AS seenAt FROM voms_seen WHERE owner = ? AND seen_at >= ? ORDER BY seen_at DESC, fqan',
    );
    this.#write = db.transaction((owner: string, fqans: readonly string[], at: number, oldest: number) => {
      for (const f of fqans) this.#upsert.run(owner, f, at);
      this.#prune.run(oldest);
    });
  }

  readonly #write: (owner: string, fqans: readonly string[], at: number, oldest: number) => void;

  /** Records `fqans` of `owner` seen at `at`, and forgets everything seen before `oldest`. */
  record(owner: string, fqans: readonly string[], at: number, oldest: number): void {
    this.#write(owner, fqans, at, oldest);
  }

  /** The FQANs `owner` was seen with at `oldest` or later, the most recent first. */
  recent(owner: string, oldest: number): { fqan: string; seenAt: number }[] {
    return this.#recent.all(owner, oldest) as { fqan: string; seenAt: number }[];
  }

  /** Forgets everything seen before `oldest` (at start: the window may have passed meanwhile). */
  prune(oldest: number): number {
    return this.#prune.run(oldest).changes;
  }
}
