/**
 * The cluster information of a backend (queues, slots, job counts) for the info document:
 * the last answer is served at once, and a stale one (older than `maxAgeMs`) starts one
 * refresh in the background; one refresh at a time. A failed refresh keeps the last
 * figures (an info document with old numbers beats none).
 */
import type { BatchClusterInfo } from '../backend.js';

export interface ClusterInfoSource {
  readonly maxAgeMs: number;
  /** Asks the batch system (its queue and host commands). */
  ask(): Promise<BatchClusterInfo>;
  /** The refresh failed (logged by the backend in its words). */
  failed(error: unknown): void;
  closed(): boolean;
}

export class ClusterInfoCache {
  #last: { info: BatchClusterInfo; at: number } | undefined;
  #refresh: Promise<void> | undefined;

  constructor(private readonly source: ClusterInfoSource) {}

  /** The last figures (undefined before the first answer); a refresh starts when they are stale. */
  current(): BatchClusterInfo | undefined {
    if (!this.source.closed() && (this.#last === undefined || Date.now() - this.#last.at > this.source.maxAgeMs))
      void this.refresh();
    return this.#last?.info;
  }

  /** The last figures without asking again. */
  get last(): BatchClusterInfo | undefined {
    return this.#last?.info;
  }

  /** Ask now; joins a refresh under way. */
  refresh(): Promise<void> {
    this.#refresh ??= this.source
      .ask()
      .then(
        (info) => void (this.#last = { info, at: Date.now() }),
        (e: unknown) => this.source.failed(e),
      )
      .finally(() => (this.#refresh = undefined));
    return this.#refresh;
  }
}
