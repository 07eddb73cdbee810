/**
 * Put a cached file into a session directory: a hard link when the cache and the
 * session are on the same file system (no copy, no extra space), a copy otherwise or
 * when asked. A link is complete the moment it exists; a copy is made under a
 * temporary name and renamed into place, so the job never sees a partial file. Hard links share the inode, hence its mode: cache
 * files are read-only (0444) and inputs that must be executable are copied.
 */
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { chmod, copyFile, link, rename, rm } from 'node:fs/promises';

const NO_LINK = new Set(['EXDEV', 'EPERM', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP', 'EACCES']);

export async function linkOrCopy(
  src: string,
  dest: string,
  opts: { readonly copy: boolean; readonly mode: number },
): Promise<'link' | 'copy'> {
  const tmp = `${dest}.ceres-${randomBytes(4).toString('hex')}`;
  try {
    if (!opts.copy) {
      try {
        // Usually nothing is there yet: link straight to the name; else replace atomically.
        await link(src, dest).catch(async (e: NodeJS.ErrnoException) => {
          if (e.code !== 'EEXIST') throw e;
          await link(src, tmp);
          await rename(tmp, dest);
        });
        return 'link';
      } catch (e) {
        if (!NO_LINK.has((e as NodeJS.ErrnoException).code ?? '')) throw e;
      }
    }
    await copyFile(src, tmp, constants.COPYFILE_FICLONE);
    await chmod(tmp, opts.mode);
    await rename(tmp, dest);
    return 'copy';
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}
