/**
 * The in-memory (id -> owner, REST state) index that answers bulk `action=status`.
 * aCT and arcstat ask for the states of thousands of jobs every few minutes; a Map probe
 * per id costs tens of nanoseconds where a SQLite probe per id (even into a covering
 * index, driven by one `json_each` statement) costs microseconds.
 *
 * Invariant: the index equals `SELECT id, owner, rest_state FROM jobs` after every
 * committed write. JobStore is the only writer of `jobs` (one connection, one process),
 * fills the index from the table when it opens, and changes it only after the statement
 * or transaction that changed the row has committed; a write that throws leaves it as it was.
 *
 * Memory: owners and states repeat, so each distinct string is kept once (~100 bytes
 * per job, ~10 MB for 100,000 jobs).
 */
interface Entry {
  owner: string;
  restState: string;
}

export class JobIndex {
  readonly #byId = new Map<string, Entry>();
  /** One string object per distinct owner / state value. */
  readonly #interned = new Map<string, string>();

  #intern(s: string): string {
    const known = this.#interned.get(s);
    if (known !== undefined) return known;
    this.#interned.set(s, s);
    return s;
  }

  get size(): number {
    return this.#byId.size;
  }

  set(id: string, owner: string, restState: string): void {
    const e = this.#byId.get(id);
    if (e !== undefined) {
      e.owner = this.#intern(owner);
      e.restState = this.#intern(restState);
    } else this.#byId.set(id, { owner: this.#intern(owner), restState: this.#intern(restState) });
  }

  delete(id: string): void {
    this.#byId.delete(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The REST state of `id` if it exists and belongs to `owner` (exact string match). */
  restStateOwned(id: string, owner: string): string | undefined {
    const e = this.#byId.get(id);
    return e !== undefined && e.owner === owner ? e.restState : undefined;
  }
}
