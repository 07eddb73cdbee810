/**
 * One list-then-watch loop over a kind of object (Jobs or Pods) with a label selector, as the
 * API's "efficient detection of changes" asks: list once, then watch from the list's
 * resourceVersion; after a broken stream resume from the last version seen; after a 410 Gone
 * (the version was compacted away) list again. The backend never polls.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { Watch } from '@kubernetes/client-node';

export interface KubeObject {
  readonly metadata?: { readonly name?: string; readonly resourceVersion?: string };
}

export interface WatchHandlers<T extends KubeObject> {
  /** A full list: every object that exists now (objects missing from it are gone). */
  readonly onList: (items: readonly T[]) => void;
  readonly onEvent: (type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T) => void;
  readonly onProblem: (what: string) => void;
}

const MAX_BACKOFF_MS = 30_000;

export class ResourceWatch<T extends KubeObject> {
  #rv: string | undefined;
  #closed = false;
  #abort: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #backoff: number;
  /** Resolves after the first successful list (submissions may wait for it). */
  readonly listed: Promise<void>;
  #listedResolve!: () => void;

  constructor(
    private readonly kc: KubeConfig,
    private readonly path: string,
    private readonly selector: string,
    private readonly list: () => Promise<{ items: T[]; metadata?: { resourceVersion?: string } }>,
    private readonly handlers: WatchHandlers<T>,
    private readonly backoffMs: number,
  ) {
    this.#backoff = backoffMs;
    this.listed = new Promise((r) => (this.#listedResolve = r));
  }

  start(): void {
    void this.#cycle();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#abort?.abort();
  }

  /** List again now (after a 410, or when the caller knows it missed something). */
  relist(): void {
    this.#rv = undefined;
    this.#abort?.abort();
  }

  async #cycle(): Promise<void> {
    if (this.#closed) return;
    try {
      if (this.#rv === undefined) {
        const l = await this.list();
        if (this.#closed) return;
        this.#rv = l.metadata?.resourceVersion;
        this.handlers.onList(l.items);
        this.#listedResolve();
      }
      const from = this.#rv;
      let gone = false;
      this.#abort = await new Watch(this.kc).watch(
        this.path,
        { labelSelector: this.selector, resourceVersion: from, allowWatchBookmarks: true },
        (type, obj: T & { code?: number }) => {
          if (this.#closed) return;
          if (type === 'ERROR') {
            // 410 Gone: the version was compacted; anything else: start from a fresh list too.
            gone = true;
            this.handlers.onProblem(`watch of ${this.path} answered ${String(obj.code)}: listing again`);
            this.#rv = undefined;
            return;
          }
          this.#backoff = this.backoffMs;
          const v = obj.metadata?.resourceVersion;
          if (v !== undefined) this.#rv = v;
          if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.handlers.onEvent(type, obj);
        },
        (err: unknown) => {
          if (this.#closed) return;
          if (err)
            this.handlers.onProblem(
              `watch of ${this.path} broke: ${err instanceof Error ? err.message : JSON.stringify(err)}`,
            );
          // A stream the server ended cleanly resumes at once; a broken one after the backoff.
          this.#again(err || gone ? this.#nextBackoff() : 0);
        },
      );
    } catch (e) {
      if (this.#closed) return;
      this.handlers.onProblem(`list of ${this.path} failed: ${e instanceof Error ? e.message : String(e)}`);
      this.#again(this.#nextBackoff());
    }
  }

  #nextBackoff(): number {
    const b = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, MAX_BACKOFF_MS);
    return b;
  }

  #again(ms: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#cycle(), ms);
  }
}
