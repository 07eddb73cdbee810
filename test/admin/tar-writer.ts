/**
 * Writes .tar.gz archives member by member, for the restore tests: members GNU tar
 * would not write from a real tree (device nodes as any user, `..` and absolute names,
 * hard links to files outside, pax records that rename a member).
 */
import { writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

export interface Member {
  name: string;
  /** '0' file, '1' hard link, '2' symlink, '3' char device, '5' directory, '6' FIFO, 'x' pax. */
  type?: string;
  mode?: number;
  uid?: number;
  gid?: number;
  data?: string | Buffer;
  link?: string;
}

const BLOCK = 512;

function octal(b: Buffer, at: number, len: number, v: number): void {
  b.write(`${v.toString(8).padStart(len - 1, '0')}\0`, at, len, 'ascii');
}

function header(m: Member, size: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(m.name, 0, 100, 'utf8');
  octal(h, 100, 8, m.mode ?? (m.type === '5' ? 0o755 : 0o644));
  octal(h, 108, 8, m.uid ?? 0);
  octal(h, 116, 8, m.gid ?? 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, Math.floor(Date.now() / 1000));
  h.write(m.type ?? '0', 156, 1, 'latin1');
  h.write(m.link ?? '', 157, 100, 'utf8');
  h.write('ustar\0', 257, 6, 'latin1');
  h.write('00', 263, 2, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const x of h) sum += x;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return h;
}

/** A pax header member setting `records` for the member after it. */
export function pax(records: Record<string, string>): Member {
  let data = '';
  for (const [k, v] of Object.entries(records)) {
    const body = ` ${k}=${v}\n`;
    let len = body.length + 1;
    while (`${len}${body}`.length !== len) len++;
    data += `${len}${body}`;
  }
  return { name: 'PaxHeader', type: 'x', data };
}

export function writeTarGz(file: string, members: readonly Member[]): void {
  const parts: Buffer[] = [];
  for (const m of members) {
    const data = Buffer.from(m.data ?? '');
    parts.push(header(m, data.length), data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  writeFileSync(file, gzipSync(Buffer.concat(parts)));
}
