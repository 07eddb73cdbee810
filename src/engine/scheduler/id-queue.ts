/**
 * A FIFO of job ids: one array read from a moving head, compacted as it drains. No object
 * per entry, so a backlog of tens of thousands of jobs waiting for their turn (new jobs,
 * pokes, stage-outs) costs a pointer each.
 */
export class IdQueue {
  #items: string[] = [];
  #head = 0;

  get size(): number {
    return this.#items.length - this.#head;
  }

  push(id: string): void {
    this.#items.push(id);
  }

  clear(): void {
    this.#items = [];
    this.#head = 0;
  }

  shift(): string | undefined {
    if (this.#head === this.#items.length) return undefined;
    const id = this.#items[this.#head++];
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 4096 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return id;
  }
}
