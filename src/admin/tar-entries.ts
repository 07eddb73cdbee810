/**
 * The members of a .tar.gz, read from their headers without extracting anything: what
 * `ceres admin restore` checks before GNU tar unpacks a backup (restore-checks.ts). A
 * backup is input like any other: it may come from another host, an old medium or a
 * hand that changed it, so its members are judged first.
 *
 * Reads the formats GNU tar writes and reads: ustar (with its name prefix), GNU (long
 * names and link targets as `L`/`K` members, numbers in base 256) and pax (`x` and `g`
 * records overriding path, linkpath, size, uid and gid). Whatever would make tar see
 * another name than this reader (a bad checksum, a record it does not know how to apply,
 * sparse or multi-volume members) is an error, not a guess.
 */
import { createReadStream } from 'node:fs';
import { createGunzip } from 'node:zlib';

export type TarType = 'file' | 'hardlink' | 'symlink' | 'chardev' | 'blockdev' | 'dir' | 'fifo' | 'other';

export interface TarEntry {
  /** The member's name as tar will use it (a trailing `/` removed). */
  readonly name: string;
  readonly type: TarType;
  /** The type flag as written (for messages about `other`). */
  readonly flag: string;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  readonly size: number;
  /** Target of a link; '' for other members. */
  readonly linkName: string;
}

export class TarFormatError extends Error {
  override readonly name = 'TarFormatError';
}

const BLOCK = 512;

const TYPES: Record<string, TarType> = {
  '0': 'file',
  '\0': 'file',
  '1': 'hardlink',
  '2': 'symlink',
  '3': 'chardev',
  '4': 'blockdev',
  '5': 'dir',
  '6': 'fifo',
};

function text(b: Buffer, at: number, len: number): string {
  const s = b.subarray(at, at + len);
  const end = s.indexOf(0);
  return s.subarray(0, end < 0 ? len : end).toString('utf8');
}

/** An octal field, or GNU's base-256 form (first byte's high bit set). */
function num(b: Buffer, at: number, len: number): number {
  const f = b.subarray(at, at + len);
  if ((f[0] ?? 0) & 0x80) {
    if ((f[0] ?? 0) & 0x40) throw new TarFormatError('a negative number in a member header');
    let v = (f[0] ?? 0) & 0x3f;
    for (let i = 1; i < f.length; i++) v = v * 256 + (f[i] ?? 0);
    if (!Number.isSafeInteger(v)) throw new TarFormatError('a number too large in a member header');
    return v;
  }
  const s = text(b, at, len).trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new TarFormatError(`a malformed number ${JSON.stringify(s)} in a member header`);
  return parseInt(s, 8);
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
  return num(h, 148, 8) === sum;
}

/** pax records `LEN key=value\n` into a map. */
function paxRecords(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const sp = data.indexOf(0x20, at);
    const len = Number(data.subarray(at, sp).toString('ascii'));
    if (sp < 0 || !Number.isSafeInteger(len) || len <= sp - at + 1 || at + len > data.length)
      throw new TarFormatError('a malformed pax header');
    const rec = data.subarray(sp + 1, at + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq < 0) throw new TarFormatError('a malformed pax record');
    out.set(rec.slice(0, eq), rec.slice(eq + 1));
    at += len;
  }
  return out;
}

/** pax keys this reader applies; any other key that changes a member's meaning is refused. */
const PAX_APPLIED = new Set(['path', 'linkpath', 'size', 'uid', 'gid']);
const PAX_HARMLESS = /^(atime|mtime|ctime|uname|gname|comment|charset|hdrcharset|SCHILY\.|LIBARCHIVE\.xattr\.)/;

function paxInt(v: string, key: string): number {
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new TarFormatError(`a malformed pax ${key}`);
  return Number(v);
}

/**
 * Every member of the gzip-compressed tar archive `file`, in order. Throws TarFormatError
 * for what is not such an archive or not one GNU tar would read as this reader does.
 */
export async function tarEntries(file: string): Promise<TarEntry[]> {
  const out: TarEntry[] = [];
  let buf: Buffer = Buffer.alloc(0);
  let skip = 0; // data bytes (with padding) of the current member still to pass
  let collect: { kind: string; need: number; parts: Buffer[]; got: number } | undefined;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax = new Map<string, string>();
  let global = new Map<string, string>();
  let ended = false;
  const header = (h: Buffer): void => {
    if (h.every((x) => x === 0)) {
      ended = true;
      return;
    }
    if (!checksumOk(h)) throw new TarFormatError('a member header with a bad checksum (not a tar archive, or damaged)');
    const flag = String.fromCharCode(h[156] ?? 0);
    const size = num(h, 124, 12);
    if (flag === 'L' || flag === 'K' || flag === 'x' || flag === 'g') {
      if (size > 1 << 20) throw new TarFormatError('an extended header larger than 1 MiB');
      collect = { kind: flag, need: size, parts: [], got: 0 };
      skip = Math.ceil(size / BLOCK) * BLOCK;
      return;
    }
    const magic = h.subarray(257, 263).toString('latin1');
    const prefix = magic === 'ustar\0' ? text(h, 345, 155) : '';
    const rec = new Map([...global, ...pax]);
    let name = rec.get('path') ?? longName ?? (prefix ? `${prefix}/${text(h, 0, 100)}` : text(h, 0, 100));
    const linkName = rec.get('linkpath') ?? longLink ?? text(h, 157, 100);
    for (const k of rec.keys())
      if (!PAX_APPLIED.has(k) && !PAX_HARMLESS.test(k))
        throw new TarFormatError(`member ${JSON.stringify(name)} has a pax record ${k} this restore does not apply`);
    const realSize = rec.has('size') ? paxInt(rec.get('size') ?? '', 'size') : size;
    if (name.length > 1 && name.endsWith('/')) name = name.replace(/\/+$/, '');
    const type = TYPES[flag] ?? 'other';
    out.push({
      name,
      type,
      flag,
      mode: num(h, 100, 8) & 0o7777,
      uid: rec.has('uid') ? paxInt(rec.get('uid') ?? '', 'uid') : num(h, 108, 8),
      gid: rec.has('gid') ? paxInt(rec.get('gid') ?? '', 'gid') : num(h, 116, 8),
      size: realSize,
      linkName,
    });
    pax = new Map();
    longName = undefined;
    longLink = undefined;
    // Links, directories and special files carry no data whatever their size field says.
    const hasData = type === 'file' || type === 'other';
    skip = hasData ? Math.ceil(realSize / BLOCK) * BLOCK : 0;
  };
  const finishCollect = (): void => {
    const c = collect;
    if (c === undefined) return;
    collect = undefined;
    const data = Buffer.concat(c.parts).subarray(0, c.need);
    if (c.kind === 'L') longName = text(data, 0, data.length);
    else if (c.kind === 'K') longLink = text(data, 0, data.length);
    else if (c.kind === 'x') pax = paxRecords(data);
    else global = new Map([...global, ...paxRecords(data)]);
  };
  const stream = createReadStream(file).pipe(createGunzip());
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      while (!ended) {
        if (skip > 0) {
          const n = Math.min(skip, buf.length);
          if (collect !== undefined && collect.got < collect.need) {
            const take = buf.subarray(0, Math.min(n, collect.need - collect.got));
            collect.parts.push(Buffer.from(take));
            collect.got += take.length;
          }
          buf = buf.subarray(n);
          skip -= n;
          if (skip > 0) break;
          finishCollect();
          continue;
        }
        if (collect !== undefined) finishCollect(); // an empty extended header
        if (buf.length < BLOCK) break;
        header(buf.subarray(0, BLOCK));
        buf = buf.subarray(BLOCK);
      }
      if (ended) break;
    }
  } catch (e) {
    if (e instanceof TarFormatError) throw e;
    throw new TarFormatError(`not a gzip-compressed tar archive (${e instanceof Error ? e.message : String(e)})`);
  } finally {
    stream.destroy();
  }
  if (!ended && (skip > 0 || buf.length > 0 || out.length === 0))
    throw new TarFormatError('the archive ends in the middle of a member (truncated)');
  return out;
}
