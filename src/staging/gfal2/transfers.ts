/**
 * Downloads, uploads and stats through a job's gfal2 helpers. gfal2 writes and reads
 * plain paths as the helper's account: a download lands in the helper's own folder and
 * the service moves it to where the native path would have written it (a session file
 * under construction, a cache entry); an upload is first copied out of the session by
 * the service (opened without following links) into that folder. So the helper never
 * touches a path the job could have turned into a link to another account's file.
 */
import { constants as C, createWriteStream, type Stats } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { StagingConfig } from '../../config/sections/staging.js';
import type { SessionOwner } from '../../fs/session-owner.js';
import { createHasher, type ChecksumAlgorithm } from '../checksum.js';
import { credentialFingerprint, type Credential } from '../credentials.js';
import { Gfal2Helper, type HelperOptions } from './helper.js';
import type { Gfal2Spares } from './spares.js';
import { endpointOf, isS3, S3Endpoints } from './s3-endpoints.js';
import { stagingError } from '../staging-error.js';
import type { Gfal2Limits } from './limits.js';
import type { AccessInfo } from '../http/access-check.js';

/** A job's helpers, one per account and credential (a per-file delegation gets its own). */
export class Gfal2Pool {
  readonly #helpers = new Map<string, Gfal2Helper>();
  readonly #s3: S3Endpoints;

  constructor(
    private readonly cfg: StagingConfig,
    private readonly limits: Gfal2Limits,
    private readonly spares: Gfal2Spares,
  ) {
    this.#s3 = new S3Endpoints(cfg.gfal2.s3Endpoints);
  }

  /**
   * The helper for a transfer of `url` and the account it runs as. s3:// and s3s:// go to
   * a helper of the service's account holding only that endpoint's keys (S3 takes the
   * site's keys, not the job's credential, and a process of the job's account could be
   * read by the job); `fromList`: the URL comes from a dynamic output list, written by the
   * job after the submission's checks, so a restricted endpoint is refused. Every other
   * protocol: the helper of the job's account and credential.
   */
  async helperFor(
    url: URL,
    owner: SessionOwner | undefined,
    credential: Credential | undefined,
    fromList = false,
  ): Promise<{ helper: Gfal2Helper; owner: SessionOwner | undefined }> {
    if (!isS3(url)) return { helper: this.helper(owner, credential), owner };
    const refusal = this.#s3.refusal(url, fromList ? undefined : []);
    // Groups were checked at submission; here only what has no groups to check.
    if (refusal !== undefined && (fromList || this.#s3.find(url) === undefined))
      throw stagingError('CE_ERR_STAGING_NO_CREDENTIAL', refusal);
    const key = `s3:${endpointOf(url)}`;
    let h = this.#helpers.get(key);
    if (h === undefined) {
      h = new Gfal2Helper({ ...this.#options(undefined, undefined), s3: await this.#s3.keysFor(url) });
      this.#helpers.set(key, h);
    }
    return { helper: h, owner: undefined };
  }

  /** Runs one transfer or stat of `url` within the service's per-endpoint and per-protocol limits. */
  limited<T>(url: URL, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    return this.limits.with(url, signal, fn);
  }

  helper(owner: SessionOwner | undefined, credential: Credential | undefined): Gfal2Helper {
    const key = `${owner?.uid ?? 'service'}:${credentialFingerprint(credential)}`;
    let h = this.#helpers.get(key);
    if (h === undefined) {
      h = new Gfal2Helper(this.#options(owner, credential));
      this.#helpers.set(key, h);
    }
    return h;
  }

  #options(owner: SessionOwner | undefined, credential: Credential | undefined): HelperOptions {
    return { owner, credential, workers: this.cfg.maxTransfersPerJob, spares: this.spares };
  }

  /** Seconds one transfer may take: connect time plus size at the rate floor, capped; unknown size: the cap. */
  limitSeconds(size: number | undefined): number {
    const g = this.cfg.gfal2;
    if (size === undefined) return g.transferSeconds;
    return Math.min(g.transferSeconds, Math.ceil(this.cfg.timeouts.connectSeconds + size / g.minBytesPerSecond));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#helpers.values()].map((h) => h.close().catch(() => undefined)));
    this.#helpers.clear();
  }
}

/**
 * adler32 compared end to end by gfal2 where the remote side computes it (xrootd: on
 * the server, `xrootd.chksum adler32`); other protocols are checked by size and by the
 * description's own checksum only.
 */
function endToEnd(url: URL): string | undefined {
  return /^x?roots?:$/.test(url.protocol) ? 'ADLER32' : undefined;
}

/**
 * A download expected to be at most this size has its end-to-end adler32 compared by
 * gfal2's own "both" mode: almost nothing beside the copy, where the question asked from
 * Python costs 0.45 to 0.58 ms of the helper's CPU per file (gfal2 parses the URL and
 * finds its plugin again for each question, compiling regular expressions each time;
 * docs/data-staging.md). But "both" has the server read the whole source after the copy,
 * which would double a large file's time, where the helper's own comparison asks beside
 * the copy. Expected small: a size the description declares (a user who declares a large
 * file small only slows their own job, whose time limit follows the declared size and
 * whose file then fails the size check), or, with no size declared, every download of
 * the job's helper so far was small (expectSmall).
 */
export const SMALL_FILE_BYTES = 4 << 20;

/**
 * Whether a download of unknown size is expected small: the helper has answered one at
 * least and none had or reported more than SMALL_FILE_BYTES. A job's first downloads
 * (those sent before any answer) keep the helper's own comparison; a large file after
 * small ones (the prediction wrong) is still checked, by "both", with the server's
 * adler32 asked beside the copy as well (helper-script.ts), so a server that keeps the
 * checksum it computed (xrootd does) reads the file once; one that does not reads it
 * again after the copy, for that file only: the first report of a large copy ends the
 * prediction for the job's next downloads.
 */
export function expectSmall(seen: { readonly answered: number; readonly largest: number }): boolean {
  return seen.answered > 0 && seen.largest <= SMALL_FILE_BYTES;
}

export interface Gfal2Download {
  readonly size: number;
  readonly checksums: Map<ChecksumAlgorithm, string>;
}

/**
 * Copies `url` to `dest` (a path the service may write), with the digests of `algorithms`.
 * The helper's file is in a folder of the job's account, whose other processes could
 * swap it for a link or a pipe meanwhile: after the move it is opened without following
 * links and must be a regular file of one link; owner, mode, size and digests are taken
 * through that descriptor, never through the path. A helper of the service's own account
 * (an unmapped job) writes in a folder only the service's account can reach: there its
 * own look at the file (size, mode, a regular file of one link), made as it answers,
 * stands, and the file is only moved (one call instead of five: most of a small file's
 * cost on the service's side). A file found wrong after the move is removed from `dest`.
 */
export async function gfal2Download(
  pool: Gfal2Pool,
  helper: Gfal2Helper,
  url: URL,
  dest: string,
  opts: {
    expectedSize?: number;
    algorithms: readonly ChecksumAlgorithm[];
    onProgress: (n: number) => void;
    /** Mode of `dest`; it becomes the service's file, as a native download's would be. */
    mode: number;
  },
  signal: AbortSignal,
): Promise<Gfal2Download> {
  const work = join(await helper.workDir(), helper.fileName('in'));
  const sizes = helper.downloads;
  const small = opts.expectedSize === undefined ? expectSmall(sizes) : opts.expectedSize <= SMALL_FILE_BYTES;
  const onProgress = (n: number): void => {
    if (n > sizes.largest) sizes.largest = n;
    opts.onProgress(n);
  };
  let seen: Record<string, unknown>;
  try {
    const limit = pool.limitSeconds(opts.expectedSize);
    seen = await pool.limited(url, signal, () =>
      helper.request(
        {
          op: 'copy',
          src: url.href,
          dst: `file://${work}`,
          overwrite: true,
          timeout: limit,
          checksum: endToEnd(url),
          mode: opts.mode,
          ...(small ? { small: true } : {}),
        },
        (limit + 30) * 1000,
        signal,
        onProgress,
      ),
    );
    await moveFile(work, dest);
  } catch (e) {
    await rm(work, { force: true });
    throw e;
  }
  const size = seen['size'];
  sizes.answered++;
  // Unknown (no look from the helper): not counted as small.
  sizes.largest = Math.max(sizes.largest, typeof size === 'number' ? size : Infinity);
  if (
    helper.asService &&
    opts.algorithms.length === 0 &&
    typeof size === 'number' &&
    seen['mode'] === opts.mode &&
    seen['regular'] === true
  ) {
    opts.onProgress(size);
    return { size, checksums: new Map() };
  }
  try {
    const { fh, st } = await openPlaced(dest);
    try {
      const uid = process.getuid?.() ?? 0;
      const gid = process.getgid?.() ?? 0;
      // Owner and mode set through the descriptor, and only where they differ.
      if (process.geteuid?.() === 0 && (st.uid !== uid || st.gid !== gid)) await fh.chown(uid, gid);
      if ((st.mode & 0o7777) !== opts.mode) await fh.chmod(opts.mode);
      const checksums = await digests(fh, opts.algorithms);
      opts.onProgress(st.size);
      return { size: st.size, checksums };
    } finally {
      await fh.close();
    }
  } catch (e) {
    await rm(dest, { force: true });
    throw e;
  }
}

/**
 * `path` opened without following a link or blocking on a pipe, with its status: a
 * regular file of one link, else refused.
 */
async function openPlaced(path: string): Promise<{ fh: FileHandle; st: Stats }> {
  let fh: FileHandle;
  try {
    fh = await open(path, C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ELOOP') throw e;
    throw stagingError('CE_ERR_STAGING_UNSAFE_PATH', 'the downloaded file was replaced by a link');
  }
  const st = await fh.stat();
  if (!st.isFile() || st.nlink !== 1) {
    await fh.close();
    throw stagingError('CE_ERR_STAGING_UNSAFE_PATH', 'the downloaded file was replaced by something else');
  }
  return { fh, st };
}

/**
 * Copies the session file (an open stream of it) of `size` bytes to `url`. The copy for
 * the helper is created anew (an existing name, a link planted there, is not followed)
 * and given to the job's account through its descriptor, never by path: that folder is
 * the account's, which could swap the name for a link to a file it must not get.
 */
export async function gfal2Upload(
  pool: Gfal2Pool,
  helper: Gfal2Helper,
  owner: SessionOwner | undefined,
  source: Readable,
  size: number,
  url: URL,
  overwrite: boolean,
  onProgress: (n: number) => void,
  signal: AbortSignal,
): Promise<void> {
  const work = join(await helper.workDir(), helper.fileName('out'));
  try {
    const fh = await open(work, C.O_WRONLY | C.O_CREAT | C.O_EXCL | C.O_NOFOLLOW, 0o600);
    try {
      if (owner !== undefined) await fh.chown(owner.uid, owner.gid);
    } catch (e) {
      await fh.close();
      throw e;
    }
    await pipeline(source, fh.createWriteStream(), { signal }); // the stream closes fh
    const limit = pool.limitSeconds(size);
    await pool.limited(url, signal, () =>
      helper.request(
        {
          op: 'copy',
          src: `file://${work}`,
          dst: url.href,
          overwrite,
          parent: true,
          timeout: limit,
          checksum: endToEnd(url),
        },
        (limit + 30) * 1000,
        signal,
        onProgress,
      ),
    );
    onProgress(size);
  } finally {
    await rm(work, { force: true });
  }
}

/** The cache's access check for a gfal2 URL: a stat with the job's credential, as its account. */
export async function gfal2Stat(
  pool: Gfal2Pool,
  helper: Gfal2Helper,
  url: URL,
  seconds: number,
  signal: AbortSignal,
): Promise<AccessInfo> {
  const r = await pool.limited(url, signal, () =>
    helper.request({ op: 'stat', url: url.href }, seconds * 1000, signal),
  );
  return typeof r['size'] === 'number' ? { size: r['size'] } : {};
}

/** Renames `from` to `to`; across file systems, copies it through a descriptor that did not follow a link. */
async function moveFile(from: string, to: string): Promise<void> {
  try {
    return await rename(from, to);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EXDEV') throw e;
  }
  const { fh: src } = await openPlaced(from);
  // The streams close their descriptors.
  await pipeline(src.createReadStream(), createWriteStream(to, { flags: 'wx', mode: 0o600 }));
  await rm(from, { force: true });
}

async function digests(
  fh: FileHandle,
  algorithms: readonly ChecksumAlgorithm[],
): Promise<Map<ChecksumAlgorithm, string>> {
  const out = new Map<ChecksumAlgorithm, string>();
  if (algorithms.length === 0) return out;
  const hashers = algorithms.map((a) => [a, createHasher(a)] as const);
  for await (const chunk of fh.createReadStream({ start: 0, highWaterMark: 1 << 20, autoClose: false }))
    for (const [, h] of hashers) h.update(chunk as Buffer);
  for (const [a, h] of hashers) out.set(a, h.digest());
  return out;
}
