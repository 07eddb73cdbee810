/**
 * Checksums of staged files. Job descriptions give them as `type:value`
 * (`adler32:0a1b2c3d`, `md5:...`, `sha256:...`); a bare value (GM xRSL `size.checksum`
 * of a user-uploaded file) is ARC's default type, the POSIX `cksum` CRC. Digests are
 * computed while the bytes stream past, so verifying never re-reads a file.
 *
 * 32-bit sums (adler32, cksum) are compared as numbers: tools print them with or
 * without leading zeros, in hex (ARC, dCache) or, for cksum, in decimal (coreutils).
 */
import { createHash, type Hash } from 'node:crypto';
import { stagingError } from './staging-error.js';

export const CHECKSUM_ALGORITHMS = ['adler32', 'cksum', 'md5', 'sha1', 'sha256', 'sha512'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

export interface ExpectedChecksum {
  readonly algorithm: ChecksumAlgorithm;
  /** Lower-case value as given. */
  readonly value: string;
}

export interface Hasher {
  update(chunk: Uint8Array): void;
  /** Canonical digest: lower-case hex; 8 hex digits for the 32-bit sums. */
  digest(): string;
}

const HEX_DIGESTS: Partial<Record<ChecksumAlgorithm, number>> = { md5: 32, sha1: 40, sha256: 64, sha512: 128 };

export function isChecksumAlgorithm(s: string): s is ChecksumAlgorithm {
  return (CHECKSUM_ALGORITHMS as readonly string[]).includes(s);
}

export function parseChecksum(text: string): ExpectedChecksum {
  const t = text.trim().toLowerCase();
  const colon = t.indexOf(':');
  const algorithm = colon < 0 ? 'cksum' : t.slice(0, colon);
  const value = colon < 0 ? t : t.slice(colon + 1);
  if (!isChecksumAlgorithm(algorithm)) {
    throw stagingError(
      'CE_ERR_STAGING_BAD_CHECKSUM',
      `Unsupported checksum type '${algorithm.replace(/[^a-z0-9_-]/g, '?').slice(0, 32)}' (supported: ${CHECKSUM_ALGORITHMS.join(', ')})`,
    );
  }
  const hexLen = HEX_DIGESTS[algorithm];
  const hex32 = /^(0x)?[0-9a-f]{1,8}$/.test(value);
  const ok =
    hexLen !== undefined
      ? new RegExp(`^[0-9a-f]{${hexLen}}$`).test(value)
      : algorithm === 'cksum'
        ? hex32 || (/^[0-9]{1,10}$/.test(value) && Number(value) < 2 ** 32)
        : hex32;
  if (!ok) throw stagingError('CE_ERR_STAGING_BAD_CHECKSUM', `Malformed ${algorithm} checksum value`);
  return { algorithm, value };
}

export function checksumMatches(expected: ExpectedChecksum, digest: string): boolean {
  if (HEX_DIGESTS[expected.algorithm] !== undefined) return expected.value === digest.toLowerCase();
  const actual = Number.parseInt(digest, 16);
  const v = expected.value.startsWith('0x') ? expected.value.slice(2) : expected.value;
  if (Number.parseInt(v, 16) === actual) return true;
  return expected.algorithm === 'cksum' && /^[0-9]+$/.test(v) && Number.parseInt(v, 10) === actual;
}

export function formatChecksum(algorithm: ChecksumAlgorithm, digest: string): string {
  return `${algorithm}:${digest}`;
}

export function createHasher(algorithm: ChecksumAlgorithm): Hasher {
  switch (algorithm) {
    case 'adler32':
      return new Adler32();
    case 'cksum':
      return new PosixCksum();
    default:
      return new NodeHash(createHash(algorithm));
  }
}

class NodeHash implements Hasher {
  constructor(private readonly h: Hash) {}
  update(chunk: Uint8Array): void {
    this.h.update(chunk);
  }
  digest(): string {
    return this.h.digest('hex');
  }
}

/** RFC 1950 Adler-32. The modulo is taken every NMAX bytes, the largest run that cannot overflow 2^53. */
class Adler32 implements Hasher {
  private a = 1;
  private b = 0;
  update(chunk: Uint8Array): void {
    const NMAX = 5552;
    let a = this.a;
    let b = this.b;
    for (let i = 0; i < chunk.length;) {
      const end = Math.min(i + NMAX, chunk.length);
      for (; i < end; i++) {
        a += chunk[i] as number;
        b += a;
      }
      a %= 65521;
      b %= 65521;
    }
    this.a = a;
    this.b = b;
  }
  digest(): string {
    return (((this.b << 16) | this.a) >>> 0).toString(16).padStart(8, '0');
  }
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 24;
    for (let k = 0; k < 8; k++) c = c & 0x80000000 ? (c << 1) ^ 0x04c11db7 : c << 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** POSIX `cksum`: CRC-32 (polynomial 0x04C11DB7, MSB first) over the data and then its length. */
class PosixCksum implements Hasher {
  private crc = 0;
  private length = 0;
  update(chunk: Uint8Array): void {
    let crc = this.crc;
    for (let i = 0; i < chunk.length; i++)
      crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ (chunk[i] as number)) & 0xff] as number)) >>> 0;
    this.crc = crc;
    this.length += chunk.length;
  }
  digest(): string {
    let crc = this.crc;
    for (let n = this.length; n > 0; n = Math.floor(n / 256))
      crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ (n % 256)) & 0xff] as number)) >>> 0;
    return (~crc >>> 0).toString(16).padStart(8, '0');
  }
}
