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
import { readdir, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSessionName } from './session-path.js';

export interface PruneResult {
  readonly removed: number;
  readonly keptAll: boolean;
}

export async function pruneSession(sessionDir: string, keep: readonly (string | { readonly name: string })[]): Promise<PruneResult> {
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
  const walk = async (dirRel: string): Promise<void> => {
    const dir = dirRel === '' ? sessionDir : join(sessionDir, dirRel);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const d of entries) {
      const rel = dirRel === '' ? d.name : `${dirRel}/${d.name}`;
      if (kept.has(rel)) continue;
      const path = join(dir, d.name);
      if (d.isDirectory() && ancestors.has(rel)) {
        await walk(rel);
      } else if (d.isDirectory()) {
        // rm does not follow symlinks inside the tree (it lstat()s).
        await rm(path, { recursive: true, force: true });
        removed++;
      } else {
        await unlink(path).catch(() => undefined);
        removed++;
      }
    }
  };
  await walk('');
  return { removed, keptAll: false };
}

/** Remove an uploaded output (a file, or a directory tree for `name/`), never through a link. */
export async function removeOutput(sessionDir: string, rel: string, tree: boolean): Promise<void> {
  const path = join(sessionDir, rel);
  if (tree) await rm(path, { recursive: true, force: true });
  else await unlink(path).catch(() => undefined);
}
