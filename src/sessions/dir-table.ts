/**
 * The entries of one session directory, read for a listing or PROPFIND with bounded
 * memory and without holding the event loop, whatever the directory holds (a job may
 * leave 200,000 files, or millions):
 *
 *  - names are read through a directory stream and counted as they come; past
 *    `maxEntries` the read stops with 403 CE_ERR_SESSION_LISTING_TOO_LARGE, before
 *    anything was stat'ed or held;
 *  - the facts a listing shows are kept in typed arrays (about 60 bytes an entry with
 *    its name), not as one `Stats` object an entry;
 *  - between batches the read checks `gone()`: a client that disconnected stops it
 *    (CE_ERR_HTTP_CLIENT_ABORTED, never answered);
 *  - a directory removed before the read ended (the job cleaned meanwhile) is 404
 *    CE_ERR_SESSION_NOT_FOUND, not the part read before passed off as the whole.
 *
 * What is listed: regular files and directories whose names a request could address
 * (links, FIFOs, sockets, devices, upload temporaries and unaddressable names are left
 * out, so every listed entry can be fetched), sorted by name in code unit order, files
 * first, then directories, which is the order every listing shows.
 */
import { opendir, type FileHandle } from 'node:fs/promises';
import { ceError, isCeError } from '../errors/ce-error.js';
import { compareNames, dirPath, kindOf, lstatIn, mapFsError, removedDir } from '../fs/safe-fs.js';
import { isAddressableName } from './session-path.js';

export interface DirTable {
  /** Files first, then directories, each group by name. */
  readonly names: readonly string[];
  readonly fileCount: number;
  readonly sizes: Float64Array;
  readonly mtimeMs: Float64Array;
  /** Birth time where the file system keeps one, else the modification time. */
  readonly createdMs: Float64Array;
}

export interface ReadDirOptions {
  readonly maxEntries: number;
  /** True once the client is gone: the read stops. */
  readonly gone: () => boolean;
}

const STAT_BATCH = 64;

export async function readDirTable(dir: FileHandle, o: ReadDirOptions): Promise<DirTable> {
  const names = await readNames(dir, o);
  names.sort(compareNames);
  const n = names.length;
  const isDir = new Uint8Array(n);
  const keep = new Uint8Array(n);
  const size = new Float64Array(n);
  const mtime = new Float64Array(n);
  const created = new Float64Array(n);
  for (let i = 0; i < n; i += STAT_BATCH) {
    if (o.gone()) throw ceError('CE_ERR_HTTP_CLIENT_ABORTED');
    const end = Math.min(n, i + STAT_BATCH);
    const stats = await Promise.all(names.slice(i, end).map((name) => lstatIn(dir, name)));
    for (let j = i; j < end; j++) {
      const s = stats[j - i];
      if (!s) continue; // removed meanwhile
      const kind = kindOf(s);
      if (kind !== 'file' && kind !== 'dir') continue;
      keep[j] = 1;
      isDir[j] = kind === 'dir' ? 1 : 0;
      size[j] = s.size;
      mtime[j] = s.mtimeMs;
      created[j] = s.birthtimeMs > 0 ? s.birthtimeMs : s.mtimeMs;
    }
  }
  // Removed while it was read: what was read is not the directory's listing any more.
  if (removedDir(await dir.stat())) throw ceError('CE_ERR_SESSION_NOT_FOUND');
  const order: number[] = [];
  for (const wantDir of [0, 1]) for (let i = 0; i < n; i++) if (keep[i] && isDir[i] === wantDir) order.push(i);
  const t = {
    names: order.map((i) => names[i] as string),
    fileCount: order.filter((i) => isDir[i] === 0).length,
    sizes: new Float64Array(order.length),
    mtimeMs: new Float64Array(order.length),
    createdMs: new Float64Array(order.length),
  };
  order.forEach((from, to) => {
    t.sizes[to] = size[from] as number;
    t.mtimeMs[to] = mtime[from] as number;
    t.createdMs[to] = created[from] as number;
  });
  return t;
}

async function readNames(dir: FileHandle, o: ReadDirOptions): Promise<string[]> {
  const names: string[] = [];
  try {
    const d = await opendir(dirPath(dir), { bufferSize: 512 });
    let seen = 0;
    for await (const e of d) {
      // Leaving the loop (throw) closes the directory stream.
      if ((++seen & 4095) === 0 && o.gone()) throw ceError('CE_ERR_HTTP_CLIENT_ABORTED');
      if (!isAddressableName(e.name)) continue;
      if (names.length >= o.maxEntries) {
        throw ceError(
          'CE_ERR_SESSION_LISTING_TOO_LARGE',
          `Directory has more than ${o.maxEntries} entries; files in it can still be fetched by name`,
        );
      }
      names.push(e.name);
    }
  } catch (e) {
    if (isCeError(e)) throw e;
    return mapFsError(e);
  }
  return names;
}
