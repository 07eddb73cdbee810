import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isAddressableName, parseSessionPath, UPLOAD_TEMP_PREFIX } from '../../src/sessions/session-path.js';
import { isCeError } from '../../src/errors/ce-error.js';

function refused(raw: string[], why: RegExp): void {
  assert.throws(
    () => parseSessionPath(raw),
    (e: unknown) => isCeError(e) && e.code === 'CE_ERR_SESSION_BAD_PATH' && e.statusCode === 400 && why.test(e.message),
    JSON.stringify(raw),
  );
}

describe('session path parsing', () => {
  it('decodes each segment separately and joins them with /', () => {
    const p = parseSessionPath(['sub', 'a%20b.txt', 'caf%C3%A9']);
    assert.deepEqual(p.segments, ['sub', 'a b.txt', 'café']);
    assert.equal(p.rel, 'sub/a b.txt/café');
    assert.equal(p.trailingSlash, false);
  });

  it('the session root is no segment, with or without a trailing slash', () => {
    assert.deepEqual(parseSessionPath([]), { segments: [], trailingSlash: false, rel: '' });
    assert.deepEqual(parseSessionPath(['']), { segments: [], trailingSlash: true, rel: '' });
  });

  it('one trailing slash marks a directory', () => {
    const p = parseSessionPath(['sub', 'dir', '']);
    assert.deepEqual(p.segments, ['sub', 'dir']);
    assert.equal(p.trailingSlash, true);
  });

  it('keeps names that merely contain dots', () => {
    assert.deepEqual(parseSessionPath(['...', '.hidden', 'a..b', '..x']).segments, ['...', '.hidden', 'a..b', '..x']);
  });

  it('refuses . and .. segments, literal or percent-encoded in any case', () => {
    for (const s of ['..', '.', '%2e%2e', '%2E%2E', '%2e.', '.%2E', '%2e']) refused(['a', s, 'b'], /'\.' and '\.\.'/);
    refused(['..', '..', 'etc', 'passwd'], /'\.\.'/);
  });

  it('refuses an encoded slash inside a segment', () => {
    refused(['a%2Fb'], /encoded '\/'/);
    refused(['%2f..%2fetc'], /encoded '\/'/);
    refused(['..%2F..%2Fetc%2Fpasswd'], /encoded '\/'/);
  });

  it('refuses backslashes, literal and encoded', () => {
    refused(['a\\b'], /backslash/);
    refused(['..\\..\\etc'], /backslash/);
    refused(['a%5Cb'], /backslash/);
    refused(['%5c..'], /backslash/);
  });

  it('refuses NUL and other control characters (they would forge input_status lines)', () => {
    refused(['a%00b'], /control/);
    refused(['a.txt%00.jpg'], /control/);
    refused(['x%0A%2Fetc%2Fpasswd'], /control|encoded/);
    refused(['line%0Abreak'], /control/);
    refused(['cr%0D'], /control/);
    refused(['del%7F'], /control/);
  });

  it('refuses empty segments in the middle', () => {
    refused(['a', '', 'b'], /empty/);
    refused(['', 'a'], /empty/);
    refused(['a', '', ''], /empty/);
  });

  it('refuses malformed percent-encoding and invalid UTF-8', () => {
    refused(['a%zzb'], /percent/);
    refused(['a%2'], /percent/);
    refused(['a%'], /percent/);
    refused(['%ff%fe'], /UTF-8/);
    refused(['%C3'], /UTF-8/);
  });

  it('refuses over-long names and too many segments', () => {
    refused(['x'.repeat(256)], /255 bytes/);
    refused(['é'.repeat(128)], /255 bytes/); // 256 bytes of UTF-8
    assert.equal(parseSessionPath(['x'.repeat(255)]).segments[0]?.length, 255);
    refused(
      Array.from({ length: 129 }, () => 'd'),
      /128/,
    );
  });

  it('refuses the reserved temporary-upload prefix', () => {
    refused([`${UPLOAD_TEMP_PREFIX}0123`], /reserved/);
  });

  it('tells which directory entries a request could name (listings show only those)', () => {
    for (const n of ['out.txt', 'a b', 'café', '...', 'x'.repeat(255)]) assert.equal(isAddressableName(n), true, n);
    for (const n of ['a\\b', 'a\nb', 'a\u0000', 'bad-\uFFFD', `${UPLOAD_TEMP_PREFIX}x`, 'é'.repeat(128)])
      assert.equal(isAddressableName(n), false, n);
  });
});
