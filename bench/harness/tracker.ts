/**
 * Every job the harness created on an endpoint, so the end of the run can clean them
 * all (and report what it could not), whatever scenario failed in between.
 */
export class JobTracker {
  readonly #ids = new Set<string>();
  #created = 0;

  add(ids: Iterable<string>): void {
    for (const id of ids) {
      if (!this.#ids.has(id)) this.#created++;
      this.#ids.add(id);
    }
  }

  forget(ids: Iterable<string>): void {
    for (const id of ids) this.#ids.delete(id);
  }

  /** Ids not yet confirmed gone. */
  get pending(): string[] {
    return [...this.#ids];
  }

  get created(): number {
    return this.#created;
  }
}
