/**
 * Files of a directory followed while the service runs (CA certificates, CRLs): at each
 * look, a file is read again only when its stamp moved: inode (a rename into place), size,
 * or modification and change times (a rewrite in place).
 *
 * An update may be caught half way (a rewrite in place, a broken download). Rule: a file
 * whose new content cannot be used keeps the value it had until it reads cleanly, and is
 * reported with `kept`; its stamp is spoilt so that the next look reads it again. A file
 * that disappears is gone. A file there but unreadable (a dangling link, no permission) is
 * reported and has no value.
 */
import { lstatSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface Followed<T> {
  readonly stamp: string;
  readonly value: T;
}

/** A file's content: its value, or why it cannot be used (with what could be used of it, if anything). */
export type FileRead<T> =
  { readonly value: T; readonly problem?: undefined } | { readonly value?: T; readonly problem: string };

export interface FileProblem {
  /** File name inside the directory. */
  readonly file: string;
  readonly reason: string;
  /** The file had a value before: it stays in force. */
  readonly kept: boolean;
}

export interface Look<T> {
  readonly files: ReadonlyMap<string, Followed<T>>;
  readonly problems: readonly FileProblem[];
  /** Whether any value was added, removed or replaced. */
  readonly changed: boolean;
}

/** Look at `names` (already listed) of `dir` again, given what the previous look had. */
export function lookAgain<T>(
  dir: string,
  names: readonly string[],
  previous: ReadonlyMap<string, Followed<T>>,
  read: (path: string) => FileRead<T>,
): Look<T> {
  const files = new Map<string, Followed<T>>();
  const problems: FileProblem[] = [];
  let changed = false;
  for (const name of names) {
    const path = join(dir, name);
    const before = previous.get(name);
    let stamp: string;
    try {
      const st = statSync(path);
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    } catch (e) {
      if (!gone(path))
        problems.push({
          file: name,
          reason: `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
          kept: false,
        });
      continue;
    }
    if (before !== undefined && before.stamp === stamp) {
      files.set(name, before);
      continue;
    }
    const r = read(path);
    if (r.problem === undefined) {
      files.set(name, { stamp, value: r.value });
      changed = true;
    } else if (before !== undefined) {
      files.set(name, { stamp: `retry:${stamp}`, value: before.value });
      problems.push({ file: name, reason: r.problem, kept: true });
    } else {
      // Never usable: what could be used of it counts, and it is read again at the next look.
      if (r.value !== undefined) {
        files.set(name, { stamp: `retry:${stamp}`, value: r.value });
        changed = true;
      }
      problems.push({ file: name, reason: r.problem, kept: false });
    }
  }
  for (const name of previous.keys()) if (!files.has(name)) changed = true;
  return { files, problems, changed };
}

function gone(path: string): boolean {
  try {
    lstatSync(path);
    return false;
  } catch {
    return true;
  }
}
