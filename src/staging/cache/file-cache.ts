/**
 * The shared input cache: downloaded files kept by URL, bounded in size (least
 * recently used evicted), handed to jobs as hard links (see link-into.ts).
 *
 * On disk (the index is the file system itself, so it survives restarts and a crash
 * leaves at most one entry to clean):
 *   <dir>/data/<h2>/<h>          the file, mode 0444 (h = sha256 of the URL)
 *   <dir>/data/<h2>/<h>.meta     JSON: url, size, mtime, checksums, validators,
 *                                last use, and per owner the last successful access check
 *   <dir>/data/<h2>/<h>.part-*   a download in progress (never handed out)
 *   <dir>/data/<h2>/<h>.lock     download lock between processes (lock-file.ts); on
 *                                success it becomes the .meta file
 * A meta file appears only after its data file is complete and renamed into place.
 *
 * Concurrency: one download per URL however many jobs ask (in-process single-flight,
 * plus the lock file against other processes); the others wait and then take the
 * cached file. Permission: a user is given a cached file only if they fetched it, or
 * an access check with their own credential (HEAD) succeeded, within
 * `accessRecheckMs`; otherwise the check is made first, and a refusal refuses the
 * file. An entry whose data changed on disk (a job wrote through its hard link) or
 * whose source changed (validators differ at a check) is dropped and fetched again.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createHasher, type ChecksumAlgorithm } from '../checksum.js';
import type { AccessInfo } from '../http/access-check.js';
import { silentLogger, type StagingLogger } from '../logger.js';
import { acquireLock } from './lock-file.js';

export interface FileCacheOptions {
  readonly dir: string;
  readonly maxBytes: number;
  readonly accessRecheckMs: number;
  readonly lockStaleMs: number;
  readonly logger?: StagingLogger;
  /** Clock (ms), for tests. */
  readonly now?: () => number;
}

export interface FetchedFile {
  readonly size: number;
  readonly checksums: ReadonlyMap<ChecksumAlgorithm, string>;
  readonly etag?: string | undefined;
  readonly lastModified?: string | undefined;
}

export interface CacheRequest {
  /** The URL as requested (options removed): the cache key. */
  readonly key: string;
  /** The job owner, whose access is recorded and checked. */
  readonly owner: string;
  /** Download the source into `tmpPath` (called at most once per concurrent group). */
  fetch(tmpPath: string, signal: AbortSignal): Promise<FetchedFile>;
  /** Check that the owner can read the source; throws when refused. */
  checkAccess(signal: AbortSignal): Promise<AccessInfo>;
  /** Drop any cached copy and fetch again (URL option cache=renew). */
  readonly renew?: boolean;
  /**
   * Requests of the same group would fail the same way (same owner, credential and
   * expectations): a failed download is shared within the group instead of repeated.
   * Default: the owner.
   */
  readonly group?: string;
}

export interface CacheLease {
  /** The cached file; valid until release(). */
  readonly path: string;
  readonly size: number;
  /** False when this request downloaded it. */
  readonly fromCache: boolean;
  /** The file's checksum, computed (once, then remembered) if not known yet. */
  checksum(algorithm: ChecksumAlgorithm): Promise<string>;
  /** Drop the entry (e.g. its checksum disagrees with what a job expected). */
  invalidate(): Promise<void>;
  release(): void;
}

export interface CacheStats {
  readonly entries: number;
  readonly bytes: number;
  readonly maxBytes: number;
  readonly downloading: number;
}

interface Meta {
  url: string;
  size: number;
  mtimeMs: number;
  created: number;
  lastUsed: number;
  checksums: Partial<Record<ChecksumAlgorithm, string>>;
  etag?: string;
  lastModified?: string;
  access: Record<string, number>;
}

interface Entry {
  readonly hash: string;
  path: string;
  meta: Meta;
  pins: number;
  /** Removed from the index while leased: the file goes when the last lease ends. */
  dropped: boolean;
  /** Too big to keep: removed when the last lease ends. */
  ephemeral: boolean;
}

interface Flight {
  readonly group: string;
  readonly done: Promise<unknown>;
}

export class FileCache {
  private readonly entries = new Map<string, Entry>();
  private readonly flights = new Map<string, Flight>();
  /** Shard directories known to exist. */
  private readonly shards = new Set<string>();
  private bytes = 0;
  private readonly log: StagingLogger;
  private readonly now: () => number;

  private constructor(private readonly opts: FileCacheOptions) {
    this.log = opts.logger ?? silentLogger;
    this.now = opts.now ?? Date.now;
  }

  /** Open (creating) the cache directory and rebuild the index from the meta files. */
  static async open(opts: FileCacheOptions): Promise<FileCache> {
    const c = new FileCache(opts);
    await mkdir(join(opts.dir, 'data'), { recursive: true, mode: 0o700 });
    await c.scan();
    await c.evict();
    return c;
  }

  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  stats(): CacheStats {
    return {
      entries: this.entries.size,
      bytes: this.bytes,
      maxBytes: this.opts.maxBytes,
      downloading: this.flights.size,
    };
  }

  /** Whether a URL is cached now (no access check: for tests and admin tools). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  async obtain(req: CacheRequest, signal: AbortSignal): Promise<CacheLease> {
    let renewed = req.renew !== true;
    for (;;) {
      signal.throwIfAborted();
      if (!renewed) {
        renewed = true;
        const old = this.entries.get(req.key);
        if (old !== undefined) await this.remove(old);
      }
      // (An entry another process added is found by download() under the lock.)
      let entry = this.entries.get(req.key);
      if (entry !== undefined && !(await this.intact(entry))) {
        this.log.info({ url: entry.meta.url }, 'cached file changed on disk; dropped');
        await this.remove(entry);
        entry = undefined;
      }
      if (entry !== undefined) {
        const lease = await this.serve(entry, req, signal);
        if (lease !== undefined) return lease;
        continue; // the source changed: fetch again
      }
      const flight = this.flights.get(req.key);
      if (flight !== undefined) {
        const failure = await abortable(flight.done, signal);
        // The same group shares the failure (it would fail the same way); others try
        // themselves, since the source may accept them. A cancelled initiator is not a failure.
        if (failure !== undefined && flight.group === (req.group ?? req.owner) && !isCancellation(failure)) {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the initiator's own failure, passed on as it was
          throw failure;
        }
        continue;
      }
      let settle!: (failure: unknown) => void;
      this.flights.set(req.key, { group: req.group ?? req.owner, done: new Promise((r) => (settle = r)) });
      try {
        const lease = await this.download(req, signal);
        settle(undefined);
        if (lease !== undefined) return lease;
      } catch (e) {
        settle(e);
        throw e;
      } finally {
        this.flights.delete(req.key);
      }
    }
  }

  /** Remove a URL's entry (admin, or a test). */
  async invalidate(key: string): Promise<void> {
    const e = this.entries.get(key);
    if (e !== undefined) await this.remove(e);
  }

  // ---------------------------------------------------------------- serving

  private async serve(entry: Entry, req: CacheRequest, signal: AbortSignal): Promise<CacheLease | undefined> {
    entry.pins++;
    try {
      const last = entry.meta.access[req.owner];
      if (last === undefined || this.now() - last > this.opts.accessRecheckMs) {
        const info = await req.checkAccess(signal);
        if (sourceChanged(info, entry.meta)) {
          this.log.info({ url: entry.meta.url }, 'source changed since it was cached; fetching again');
          entry.pins--;
          await this.remove(entry);
          return undefined;
        }
        entry.meta.access[req.owner] = this.now();
      }
      entry.meta.lastUsed = this.now();
      if (!entry.dropped) await this.writeMeta(entry);
      return this.lease(entry, true);
    } catch (e) {
      entry.pins--;
      await this.afterRelease(entry);
      throw e;
    }
  }

  private lease(entry: Entry, fromCache: boolean): CacheLease {
    let released = false;
    return {
      get path() {
        return entry.path;
      },
      size: entry.meta.size,
      fromCache,
      checksum: (a) => this.checksumOf(entry, a),
      invalidate: () => this.remove(entry),
      release: () => {
        if (released) return;
        released = true;
        entry.pins--;
        void this.afterRelease(entry);
      },
    };
  }

  private async checksumOf(entry: Entry, algorithm: ChecksumAlgorithm): Promise<string> {
    const known = entry.meta.checksums[algorithm];
    if (known !== undefined) return known;
    const h = createHasher(algorithm);
    for await (const chunk of createReadStream(entry.path, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
    const digest = h.digest();
    entry.meta.checksums[algorithm] = digest;
    if (!entry.dropped && !entry.ephemeral) await this.writeMeta(entry);
    return digest;
  }

  // ---------------------------------------------------------------- downloading

  /** Fetch into the cache; undefined when another process completed it meanwhile (caller re-looks). */
  private async download(req: CacheRequest, signal: AbortSignal): Promise<CacheLease | undefined> {
    const hash = hashOf(req.key);
    const data = this.dataPath(hash);
    const shard = hash.slice(0, 2);
    if (!this.shards.has(shard)) {
      await mkdir(join(this.opts.dir, 'data', shard), { recursive: true, mode: 0o700 });
      this.shards.add(shard);
    }
    const lock = await acquireLock(`${data}.lock`, this.opts.lockStaleMs, signal);
    let committed = false;
    try {
      if (this.entries.has(req.key) || (await this.loadFromDisk(req.key)) !== undefined) return undefined;
      const tmp = `${data}.part-${randomBytes(4).toString('hex')}`;
      let got: FetchedFile;
      try {
        got = await req.fetch(tmp, signal);
        await chmod(tmp, 0o444);
        await rename(tmp, data);
      } catch (e) {
        await rm(tmp, { force: true });
        throw e;
      }
      const st = await stat(data);
      const t = this.now();
      const meta: Meta = {
        url: req.key,
        size: st.size,
        mtimeMs: st.mtimeMs,
        created: t,
        lastUsed: t,
        checksums: Object.fromEntries(got.checksums),
        ...(got.etag === undefined ? {} : { etag: got.etag }),
        ...(got.lastModified === undefined ? {} : { lastModified: got.lastModified }),
        access: { [req.owner]: t },
      };
      const entry: Entry = { hash, path: data, meta, pins: 1, dropped: false, ephemeral: st.size > this.opts.maxBytes };
      if (entry.ephemeral) {
        this.log.info({ url: req.key, size: st.size }, 'file larger than the cache; not kept');
      } else {
        await lock.commit(`${data}.meta`, JSON.stringify(meta));
        committed = true;
        this.add(entry);
        await this.evict();
      }
      return this.lease(entry, false);
    } finally {
      if (!committed) await lock.release();
    }
  }

  // ---------------------------------------------------------------- index

  private add(entry: Entry): void {
    const old = this.entries.get(entry.meta.url);
    if (old !== undefined) this.bytes -= old.meta.size;
    this.entries.set(entry.meta.url, entry);
    this.bytes += entry.meta.size;
  }

  private async remove(entry: Entry): Promise<void> {
    if (entry.dropped) return;
    entry.dropped = true;
    if (this.entries.get(entry.meta.url) === entry) {
      this.entries.delete(entry.meta.url);
      this.bytes -= entry.meta.size;
    }
    await rm(`${entry.path}.meta`, { force: true });
    if (entry.pins > 0) {
      // Leased: move the data aside so that a new download can take the name.
      const aside = `${entry.path}.drop-${randomBytes(4).toString('hex')}`;
      await rename(entry.path, aside).then(
        () => (entry.path = aside),
        () => undefined,
      );
    } else {
      await rm(entry.path, { force: true });
    }
  }

  private async afterRelease(entry: Entry): Promise<void> {
    if (entry.pins > 0) return;
    if (entry.dropped || entry.ephemeral) await rm(entry.path, { force: true });
    else await this.evict();
  }

  /** Evict least recently used, unleased entries until the cache fits its bound. */
  private async evict(): Promise<void> {
    if (this.bytes <= this.opts.maxBytes) return;
    const victims = [...this.entries.values()]
      .filter((e) => e.pins === 0)
      .sort((a, b) => a.meta.lastUsed - b.meta.lastUsed);
    for (const v of victims) {
      if (this.bytes <= this.opts.maxBytes) break;
      this.log.debug({ url: v.meta.url, size: v.meta.size }, 'cache eviction');
      await this.remove(v);
    }
  }

  private async intact(entry: Entry): Promise<boolean> {
    const st = await stat(entry.path).catch(() => undefined);
    return st !== undefined && st.size === entry.meta.size && st.mtimeMs === entry.meta.mtimeMs;
  }

  private dataPath(hash: string): string {
    return join(this.opts.dir, 'data', hash.slice(0, 2), hash);
  }

  /**
   * Rewritten in place (no temporary file): a torn write from a crash only makes the
   * entry unreadable, i.e. a cache miss, and in-place writes create no inodes.
   */
  private async writeMeta(entry: Entry): Promise<void> {
    await writeFile(`${entry.path}.meta`, JSON.stringify(entry.meta), { mode: 0o600 });
  }

  /** An entry another process added since the scan. */
  private async loadFromDisk(key: string): Promise<Entry | undefined> {
    const hash = hashOf(key);
    const meta = await readMeta(`${this.dataPath(hash)}.meta`);
    if (meta?.url !== key) return undefined;
    const entry: Entry = { hash, path: this.dataPath(hash), meta, pins: 0, dropped: false, ephemeral: false };
    if (!(await this.intact(entry))) return undefined;
    this.add(entry);
    return entry;
  }

  /** Rebuild the index; remove leftovers of crashes (partial downloads, data without meta, orphaned metas). */
  private async scan(): Promise<void> {
    const root = join(this.opts.dir, 'data');
    for (const sub of await readdir(root)) {
      const dir = join(root, sub);
      const names = await readdir(dir).catch(() => [] as string[]);
      const present = new Set(names);
      for (const name of names) {
        const path = join(dir, name);
        if (name.endsWith('.meta')) {
          const meta = await readMeta(path);
          const hash = name.slice(0, -'.meta'.length);
          const entry: Entry | undefined =
            meta === undefined
              ? undefined
              : { hash, path: join(dir, hash), meta, pins: 0, dropped: false, ephemeral: false };
          if (entry === undefined || hashOf(entry.meta.url) !== hash || !(await this.intact(entry)))
            await rm(path, { force: true });
          else this.add(entry);
        } else if (/\.(part|drop)-[0-9a-f]+$/.test(name)) {
          const st = await stat(path).catch(() => undefined);
          if (st !== undefined && this.now() - st.mtimeMs > this.opts.lockStaleMs) await rm(path, { force: true });
        } else if (/^[0-9a-f]{64}$/.test(name) && !present.has(`${name}.meta`)) {
          await rm(path, { force: true });
        }
      }
    }
    this.log.info({ entries: this.entries.size, bytes: this.bytes }, 'cache opened');
  }
}

function hashOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

async function readMeta(path: string): Promise<Meta | undefined> {
  try {
    const m = JSON.parse(await readFile(path, 'utf8')) as Partial<Meta>;
    if (
      typeof m.url === 'string' &&
      typeof m.size === 'number' &&
      typeof m.mtimeMs === 'number' &&
      typeof m.lastUsed === 'number'
    ) {
      return { created: m.lastUsed, checksums: {}, access: {}, ...m } as Meta;
    }
  } catch {
    // absent or torn: treated as no entry
  }
  return undefined;
}

function sourceChanged(info: AccessInfo, meta: Meta): boolean {
  if (info.etag !== undefined && meta.etag !== undefined && info.etag !== meta.etag) return true;
  if (info.lastModified !== undefined && meta.lastModified !== undefined && info.lastModified !== meta.lastModified)
    return true;
  return info.size !== undefined && info.size !== meta.size;
}

function isCancellation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'CE_ERR_STAGING_CANCELLED' || (e as { name?: unknown } | null)?.name === 'AbortError';
}

/** Wait for a flight's outcome (undefined = success, else the failure) unless our own signal fires. */
function abortable(done: Promise<unknown>, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    void done.then((v) => {
      signal.removeEventListener('abort', onAbort);
      resolve(v);
    });
  });
}
