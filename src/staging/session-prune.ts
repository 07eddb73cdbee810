/**
 * Session pruning at the start of FINISHING, as A-REX does: everything that is not
 * named as an output is deleted, so that what the client downloads (and what still
 * has to be uploaded) is exactly what the description listed. Rules:
 *  - an output `/` keeps the whole directory;
 *  - an output naming a directory (`name/`, or a name that is a directory) keeps its tree;
 *  - directories leading to a kept output are kept (their other contents are not);
 *  - symbolic links are never followed: a link is removed as a link unless named, and a
 *    linked directory is not descended into (a job cannot make the service delete or
 *    keep something outside its session).
 */
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { DIR_FLAGS, dirPath, inDir, lstatIn, openDirChain, openSessionRoot, removeEntry } from '../fs/safe-fs.js';
import { parseSessionName } from './session-path.js';

export interface PruneResult {
  readonly removed: number;
  readonly keptAll: boolean;
}

export async function pruneSession(
  sessionDir: string,
  keep: readonly (string | { readonly name: string })[],
): Promise<PruneResult> {
  const kept = new Set<string>();
  const ancestors = new Set<string>();
  for (const k of keep) {
    const raw = typeof k === 'string' ? k : k.name;
    let rel: string;
    try {
      rel = parseSessionName(raw.startsWith('@') ? raw.slice(1) : raw).rel;
    } catch {
      continue; // a name that cannot be in the session keeps nothing
    }
    if (rel === '') return { removed: 0, keptAll: true };
    kept.add(rel);
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) ancestors.add(parts.slice(0, i).join('/'));
  }
  let removed = 0;
  // Through descriptors (src/fs/safe-fs.ts): a directory is entered only as opened with
  // O_DIRECTORY|O_NOFOLLOW, so a job swapping it for a link meanwhile cannot redirect
  // the pruning; removal unlinks links and never descends through them.
  const walk = async (dir: FileHandle, dirRel: string): Promise<void> => {
    const names = await readdir(dirPath(dir)).catch(() => [] as string[]);
    for (const name of names) {
      const rel = dirRel === '' ? name : `${dirRel}/${name}`;
      if (kept.has(rel)) continue;
      if (ancestors.has(rel)) {
        const sub = await open(inDir(dir, name), DIR_FLAGS).catch(() => undefined);
        if (sub !== undefined) {
          try {
            await walk(sub, rel);
          } finally {
            await sub.close();
          }
          continue;
        }
        // not a directory (a file or a link where a kept path leads): removed below
      }
      try {
        await removeEntry(dir, name);
        removed++;
      } catch {
        // gone meanwhile, too deep, or the job keeps changing it: left for clean
      }
    }
  };
  const root = await openSessionRoot(sessionDir).catch(() => undefined);
  if (root === undefined) return { removed: 0, keptAll: false };
  try {
    await walk(root, '');
  } finally {
    await root.close();
  }
  return { removed, keptAll: false };
}

/** Remove an uploaded output (a file, or a directory tree for `name/`), never through a link. */
export async function removeOutput(sessionDir: string, rel: string, tree: boolean): Promise<void> {
  const segs = rel.split('/');
  const name = segs.pop() as string;
  const parent = await openDirChain(sessionDir, segs).catch(() => undefined);
  if (parent === undefined) return;
  try {
    const s = await lstatIn(parent, name);
    if (s !== undefined && (tree || !s.isDirectory())) await removeEntry(parent, name);
  } catch {
    // already gone, or changing under the job's hands: clean removes it
  } finally {
    await parent.close();
  }
}
