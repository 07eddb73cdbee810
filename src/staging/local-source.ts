/**
 * file:// sources, allowed only by configuration (`staging.allowFileUrls`): they are
 * read with the service's own permissions, so only sites whose users may read what
 * the service can read should enable them. Streaming copy with the same size and
 * checksum handling as downloads; never cached.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { createHasher, type ChecksumAlgorithm } from './checksum.js';
import { StagingError, stagingError } from './staging-error.js';

export interface LocalCopy {
  readonly size: number;
  readonly checksums: ReadonlyMap<ChecksumAlgorithm, string>;
}

export async function copyLocalSource(
  url: URL,
  dest: string,
  opts: {
    readonly expectedSize?: number;
    readonly algorithms: readonly ChecksumAlgorithm[];
    readonly highWaterMark: number;
    readonly onProgress?: (bytes: number) => void;
  },
  signal: AbortSignal,
): Promise<LocalCopy> {
  const hashers = new Map(opts.algorithms.map((a) => [a, createHasher(a)]));
  let bytes = 0;
  const meter = async function* (src: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of src) {
      bytes += chunk.length;
      if (opts.expectedSize !== undefined && bytes > opts.expectedSize)
        throw stagingError(
          'CE_ERR_STAGING_SIZE_MISMATCH',
          `size mismatch: more than the expected ${opts.expectedSize} bytes`,
        );
      for (const h of hashers.values()) h.update(chunk);
      opts.onProgress?.(bytes);
      yield chunk;
    }
  };
  try {
    await pipeline(
      createReadStream(fileURLToPath(url), { highWaterMark: opts.highWaterMark }),
      meter,
      // A new file only ('wx': O_EXCL, which also refuses a link planted at the name).
      createWriteStream(dest, { flags: 'wx', highWaterMark: opts.highWaterMark }),
      { signal },
    );
  } catch (e) {
    if (e instanceof StagingError) throw e;
    if (signal.aborted) throw stagingError('CE_ERR_STAGING_CANCELLED', 'cancelled', { cause: e });
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw stagingError(
      'CE_ERR_STAGING_LOCAL_IO',
      code === 'ENOENT' ? 'no such file' : `cannot read the file (${code})`,
      { cause: e },
    );
  }
  if (opts.expectedSize !== undefined && bytes !== opts.expectedSize)
    throw stagingError('CE_ERR_STAGING_SIZE_MISMATCH', `size mismatch: ${bytes} bytes, ${opts.expectedSize} expected`);
  return { size: bytes, checksums: new Map([...hashers].map(([a, h]) => [a, h.digest()])) };
}
