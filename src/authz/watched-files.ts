/**
 * Files named by the authorization configuration (grid-mapfiles), re-read when they
 * change, without a restart. The request path calls `refresh()`: at most once per
 * `intervalMs` it stats each file (a few syscalls) and re-reads only a file whose
 * identity, size, mtime or ctime changed, so the work per request stays bounded
 * whatever the file size. An unreadable or missing file counts as empty (it grants
 * nothing) and is logged; it applies again as soon as it is readable.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseGridMapFile, type GridMap } from './grid-mapfile.js';

export interface FileEvent {
  readonly path: string;
  /** Undefined when the file was read; the reason when it could not be. */
  readonly error?: string;
  readonly problems: readonly { line: number; reason: string }[];
  readonly entries: number;
}

const EMPTY: GridMap = { accounts: new Map(), sharers: new Map(), problems: [] };

interface Entry {
  sig: string;
  map: GridMap;
}

export class WatchedGridMaps {
  readonly #files = new Map<string, Entry>();
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #onLoad: (e: FileEvent) => void;
  #checkedAt = -Infinity;
  /** Incremented whenever any file's content changed: decisions derived from them are stale. */
  generation = 0;

  constructor(paths: Iterable<string>, o: { intervalMs: number; now?: () => number; onLoad?: (e: FileEvent) => void }) {
    this.#intervalMs = o.intervalMs;
    this.#now = o.now ?? Date.now;
    this.#onLoad = o.onLoad ?? (() => undefined);
    for (const p of paths) this.#files.set(p, { sig: '', map: EMPTY });
    this.refresh(true);
  }

  /** Re-read changed files if the last check is older than the interval (or `force`). True when something changed. */
  refresh(force = false): boolean {
    const now = this.#now();
    if (!force && now - this.#checkedAt < this.#intervalMs) return false;
    this.#checkedAt = now;
    let changed = false;
    for (const [path, e] of this.#files) {
      const sig = signature(path);
      if (sig === e.sig) continue;
      e.sig = sig;
      changed = true;
      if (sig.startsWith('!')) {
        e.map = EMPTY;
        this.#onLoad({ path, error: sig.slice(1), problems: [], entries: 0 });
        continue;
      }
      try {
        e.map = parseGridMapFile(readFileSync(path, 'utf8'));
        this.#onLoad({ path, problems: e.map.problems, entries: e.map.accounts.size });
      } catch (err) {
        e.map = EMPTY;
        e.sig = `!${(err as NodeJS.ErrnoException).code ?? 'error'}`;
        this.#onLoad({ path, error: e.sig.slice(1), problems: [], entries: 0 });
      }
    }
    if (changed) this.generation++;
    return changed;
  }

  /** The parsed file (as of the last refresh); empty for a path not registered. */
  get(path: string): GridMap {
    return this.#files.get(path)?.map ?? EMPTY;
  }
}

function signature(path: string): string {
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st === undefined) return '!ENOENT';
    if (!st.isFile()) return '!not a regular file';
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch (err) {
    return `!${(err as NodeJS.ErrnoException).code ?? 'error'}`;
  }
}
