/**
 * Why a file or folder the configuration names cannot serve: the words the start and
 * `ceres admin config check` print after the key (src/service/config-checks.ts).
 */
import { accessSync, constants, statSync } from 'node:fs';

/** Why `path` cannot be read as a `kind`, or undefined when it can. */
export function unreadablePath(path: string, kind: 'file' | 'dir' = 'file'): string | undefined {
  try {
    const st = statSync(path);
    if (kind === 'dir' ? !st.isDirectory() : !st.isFile()) return `not a ${kind === 'dir' ? 'directory' : 'file'}`;
    accessSync(path, constants.R_OK | (kind === 'dir' ? constants.X_OK : 0));
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'not readable' : (e as Error).message;
  }
}
