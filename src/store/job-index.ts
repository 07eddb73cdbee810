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
 * Memory (docs/performance.md, "Memory"): one Map entry per job whose value is a small
 * integer (owner number × 32 + state number, a V8 Smi: no object per job). Owners and
 * states repeat, so each distinct value is numbered once. A job then costs its id string
 * (~40 bytes) and its Map slot (~20-30 bytes); an object per job doubled that.
 */
/** Distinct state strings the packing can hold (REST states are 13). */
const STATE_BITS = 5;
const STATE_MASK = (1 << STATE_BITS) - 1;
/** Owners the packing can hold with the value still a Smi (2^31 / 32). */
const MAX_OWNERS = 2 ** (31 - STATE_BITS);

/** Numbers for distinct strings, kept for the index's life (owners and states are few and bounded). */
class Numbering {
  readonly #byValue = new Map<string, number>();
  readonly #values: string[] = [];

  constructor(readonly max: number) {}

  numberOf(s: string): number | undefined {
    return this.#byValue.get(s);
  }

  /** The number of `s`, given one on first sight; throws past `max` distinct values. */
  intern(s: string): number {
    const known = this.#byValue.get(s);
    if (known !== undefined) return known;
    if (this.#values.length >= this.max) throw new RangeError(`job index: more than ${this.max} distinct values`);
    const n = this.#values.length;
    this.#values.push(s);
    this.#byValue.set(s, n);
    return n;
  }

  valueOf(n: number): string {
    return this.#values[n]!;
  }
}

export class JobIndex {
  readonly #byId = new Map<string, number>();
  readonly #owners = new Numbering(MAX_OWNERS);
  readonly #states = new Numbering(STATE_MASK + 1);

  get size(): number {
    return this.#byId.size;
  }

  /** Records the job; throws (and changes nothing) only if a packing limit is passed. */
  set(id: string, owner: string, restState: string): void {
    const state = this.#states.intern(restState);
    this.#byId.set(id, this.#owners.intern(owner) * (STATE_MASK + 1) + state);
  }

  delete(id: string): void {
    this.#byId.delete(id);
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The REST state of `id` if it exists and belongs to `owner` (exact string match). */
  restStateOwned(id: string, owner: string): string | undefined {
    const v = this.#byId.get(id);
    if (v === undefined) return undefined;
    const o = this.#owners.numberOf(owner);
    if (o === undefined || Math.floor(v / (STATE_MASK + 1)) !== o) return undefined;
    return this.#states.valueOf(v & STATE_MASK);
  }

  /** The owner and REST state of `id` (tests compare the index with the table). */
  entry(id: string): { owner: string; restState: string } | undefined {
    const v = this.#byId.get(id);
    if (v === undefined) return undefined;
    return {
      owner: this.#owners.valueOf(Math.floor(v / (STATE_MASK + 1))),
      restState: this.#states.valueOf(v & STATE_MASK),
    };
  }
}
