import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { checksumMatches, createHasher, parseChecksum } from '../../src/staging/checksum.js';
import { isCeError } from '../../src/errors/ce-error.js';

const digest = (algo: Parameters<typeof createHasher>[0], ...chunks: Buffer[]): string => {
  const h = createHasher(algo);
  for (const c of chunks) h.update(c);
  return h.digest();
};

describe('checksums', () => {
  it('adler32 matches the RFC 1950 reference values, across chunk boundaries', () => {
    assert.equal(digest('adler32', Buffer.from('Wikipedia')), '11e60398');
    assert.equal(digest('adler32', Buffer.alloc(0)), '00000001');
    // Long input (beyond the 5552-byte modulo window), split unevenly.
    const data = Buffer.alloc(100_000, 0xff);
    assert.equal(
      digest('adler32', data.subarray(0, 7), data.subarray(7, 60_001), data.subarray(60_001)),
      digest('adler32', data),
    );
  });

  it('cksum equals the POSIX cksum tool', (t) => {
    const data = randomBytes(70_001);
    const r = spawnSync('cksum', { input: data });
    if (r.status !== 0) return t.skip('cksum tool not available');
    const crc = Number(r.stdout.toString().split(' ')[0]);
    const ours = digest('cksum', data.subarray(0, 1000), data.subarray(1000));
    assert.equal(Number.parseInt(ours, 16), crc);
    // Decimal (coreutils) and hex forms are both accepted.
    assert.ok(checksumMatches(parseChecksum(`cksum:${crc}`), ours));
    assert.ok(checksumMatches(parseChecksum(String(crc)), ours), 'a bare value is a cksum');
  });

  it('md5, sha1, sha256 and sha512 are the standard digests', () => {
    const data = randomBytes(5000);
    for (const a of ['md5', 'sha1', 'sha256', 'sha512'] as const)
      assert.equal(digest(a, data), createHash(a).update(data).digest('hex'));
  });

  it('accepts type:value forms case-insensitively and 32-bit sums without leading zeros', () => {
    assert.ok(checksumMatches(parseChecksum('ADLER32:11E60398'), '11e60398'));
    assert.ok(checksumMatches(parseChecksum('adler32:1'), '00000001'));
    const md5 = createHash('md5').update('x').digest('hex');
    assert.ok(checksumMatches(parseChecksum(`md5:${md5.toUpperCase()}`), md5));
  });

  it('a different value does not match', () => {
    assert.equal(checksumMatches(parseChecksum('adler32:11e60399'), '11e60398'), false);
    assert.equal(checksumMatches(parseChecksum(`sha256:${'0'.repeat(64)}`), 'f'.repeat(64)), false);
  });

  it('rejects unknown types and malformed values with a catalog error', () => {
    for (const bad of ['crc64:abcd', 'md5:xyz', `sha256:${'a'.repeat(63)}`, 'adler32:123456789', 'adler32:']) {
      assert.throws(
        () => parseChecksum(bad),
        (e: unknown) => isCeError(e) && e.code === 'CE_ERR_STAGING_BAD_CHECKSUM',
        bad,
      );
    }
  });
});
