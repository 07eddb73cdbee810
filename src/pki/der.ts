/**
 * A small strict DER reader. Certificate checks need the exact bytes of names and
 * extensions as they were signed (to compare issuer and subject names and to hash
 * them the way OpenSSL does), so this reads tag-length-value slices without
 * re-encoding anything. Only definite lengths are accepted: DER forbids the rest.
 */

export class DerError extends Error {
  override readonly name = 'DerError';
}

export interface Tlv {
  /** The identifier octet (single-byte tags only; X.509 needs no others). */
  readonly tag: number;
  /** Offset of the identifier octet in `buf`. */
  readonly start: number;
  /** Offset of the first content octet. */
  readonly contentStart: number;
  /** Offset just past the last content octet. */
  readonly end: number;
  readonly buf: Uint8Array;
}

export const TAG = {
  BOOLEAN: 0x01,
  INTEGER: 0x02,
  BIT_STRING: 0x03,
  OCTET_STRING: 0x04,
  NULL: 0x05,
  OID: 0x06,
  UTF8_STRING: 0x0c,
  PRINTABLE_STRING: 0x13,
  T61_STRING: 0x14,
  IA5_STRING: 0x16,
  UTC_TIME: 0x17,
  GENERALIZED_TIME: 0x18,
  VISIBLE_STRING: 0x1a,
  UNIVERSAL_STRING: 0x1c,
  BMP_STRING: 0x1e,
  SEQUENCE: 0x30,
  SET: 0x31,
} as const;

export function readTlv(buf: Uint8Array, offset = 0, limit = buf.length): Tlv {
  if (offset + 2 > limit) throw new DerError('truncated DER element');
  const tag = buf[offset] as number;
  if ((tag & 0x1f) === 0x1f) throw new DerError('multi-byte DER tags are not supported');
  let p = offset + 1;
  const first = buf[p++] as number;
  let len: number;
  if (first < 0x80) {
    len = first;
  } else {
    const n = first & 0x7f;
    if (n === 0) throw new DerError('indefinite length is not DER');
    if (n > 4) throw new DerError('DER length too large');
    if (p + n > limit) throw new DerError('truncated DER length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + (buf[p++] as number);
  }
  const end = p + len;
  if (end > limit) throw new DerError('DER element overruns its container');
  return { tag, start: offset, contentStart: p, end, buf };
}

/** The elements inside a constructed TLV, in order. */
export function children(t: Tlv): Tlv[] {
  if ((t.tag & 0x20) === 0) throw new DerError('not a constructed DER element');
  const out: Tlv[] = [];
  let p = t.contentStart;
  while (p < t.end) {
    const c = readTlv(t.buf, p, t.end);
    out.push(c);
    p = c.end;
  }
  return out;
}

/** Parse a whole buffer as exactly one element (no trailing bytes). */
export function parseDer(buf: Uint8Array): Tlv {
  const t = readTlv(buf, 0);
  if (t.end !== buf.length) throw new DerError('trailing bytes after DER element');
  return t;
}

export function expectTag(t: Tlv | undefined, tag: number, what: string): Tlv {
  if (t === undefined || t.tag !== tag) throw new DerError(`${what}: unexpected DER structure`);
  return t;
}

/** Bytes of the whole element (tag, length and content). */
export function raw(t: Tlv): Uint8Array {
  return t.buf.subarray(t.start, t.end);
}

export function content(t: Tlv): Uint8Array {
  return t.buf.subarray(t.contentStart, t.end);
}

export function decodeOid(t: Tlv): string {
  const c = content(expectTag(t, TAG.OID, 'object identifier'));
  if (c.length === 0) throw new DerError('empty object identifier');
  const parts: number[] = [];
  let v = 0;
  for (let i = 0; i < c.length; i++) {
    const b = c[i] as number;
    v = v * 128 + (b & 0x7f);
    if ((b & 0x80) === 0) {
      parts.push(v);
      v = 0;
    } else if (i === c.length - 1) {
      throw new DerError('truncated object identifier');
    }
  }
  const head = parts[0] as number;
  const a = head < 40 ? 0 : head < 80 ? 1 : 2;
  return [a, head - a * 40, ...parts.slice(1)].join('.');
}

export function decodeBoolean(t: Tlv): boolean {
  const c = content(expectTag(t, TAG.BOOLEAN, 'boolean'));
  if (c.length !== 1) throw new DerError('bad boolean');
  return c[0] !== 0;
}

/** Non-negative INTEGER that fits a JS number (path lengths and the like). */
export function decodeSmallUint(t: Tlv): number {
  const c = content(expectTag(t, TAG.INTEGER, 'integer'));
  if (c.length === 0 || c.length > 6 || ((c[0] as number) & 0x80) !== 0) throw new DerError('integer out of range');
  let v = 0;
  for (const b of c) v = v * 256 + b;
  return v;
}

/** BIT STRING as a function telling whether bit n (0 = most significant of the first byte) is set. */
export function decodeBits(t: Tlv): (n: number) => boolean {
  const c = content(expectTag(t, TAG.BIT_STRING, 'bit string'));
  if (c.length === 0) throw new DerError('bad bit string');
  const bytes = c.subarray(1);
  return (n) => {
    const b = bytes[n >> 3];
    return b !== undefined && (b & (0x80 >> (n & 7))) !== 0;
  };
}

/** UTCTime (years 1950-2049) or GeneralizedTime, both in Zulu time as RFC 5280 requires. */
export function decodeTime(t: Tlv): Date {
  const s = Buffer.from(content(t)).toString('latin1');
  let m: RegExpExecArray | null;
  if (t.tag === TAG.UTC_TIME && (m = /^(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)?Z$/.exec(s))) {
    const yy = Number(m[1]);
    return utc(yy < 50 ? 2000 + yy : 1900 + yy, m[2], m[3], m[4], m[5], m[6]);
  }
  if (t.tag === TAG.GENERALIZED_TIME && (m = /^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(?:\.\d+)?Z$/.exec(s))) {
    return utc(Number(m[1]), m[2], m[3], m[4], m[5], m[6]);
  }
  throw new DerError('bad certificate time');
}

function utc(y: number, mo?: string, d?: string, h?: string, mi?: string, s?: string): Date {
  const date = new Date(Date.UTC(y, Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? '0')));
  if (Number.isNaN(date.getTime())) throw new DerError('bad certificate time');
  return date;
}

/** Encode one element with a definite (minimal) length. */
export function encodeTlv(tag: number, ...parts: readonly Uint8Array[]): Buffer {
  const body = Buffer.concat(parts);
  const n = body.length;
  let head: number[];
  if (n < 0x80) head = [tag, n];
  else if (n < 0x100) head = [tag, 0x81, n];
  else if (n < 0x10000) head = [tag, 0x82, n >> 8, n & 0xff];
  else head = [tag, 0x83, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
  return Buffer.concat([Buffer.from(head), body]);
}

export function encodeOid(oid: string): Buffer {
  const parts = oid.split('.').map((x) => {
    if (!/^\d+$/.test(x)) throw new DerError(`bad object identifier ${oid}`);
    return Number(x);
  });
  const [a, b, ...rest] = parts;
  if (a === undefined || b === undefined || a > 2) throw new DerError(`bad object identifier ${oid}`);
  const out: number[] = [];
  for (const v of [a * 40 + b, ...rest]) {
    const bytes = [v & 0x7f];
    for (let x = Math.floor(v / 128); x > 0; x = Math.floor(x / 128)) bytes.unshift((x & 0x7f) | 0x80);
    out.push(...bytes);
  }
  return encodeTlv(TAG.OID, Buffer.from(out));
}
