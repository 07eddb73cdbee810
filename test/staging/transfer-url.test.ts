import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cacheMode, checksumOption, overwriteAllowed, parseTransferUrl } from '../../src/staging/transfer-url.js';
import { redactUrl } from '../../src/staging/redact.js';
import { isCeError } from '../../src/errors/ce-error.js';

const code = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (e) {
    return isCeError(e) ? e.code : 'not a CeError';
  }
  return undefined;
};

describe('transfer URLs', () => {
  it('takes checksum=type:value as the checksum an input must have; a bare algorithm carries none', () => {
    assert.equal(checksumOption(parseTransferUrl('root://se/f', { checksum: 'adler32:1a2b3c4d' })), 'adler32:1a2b3c4d');
    assert.equal(checksumOption(parseTransferUrl('https://se;checksum=md5:00ff/f')), 'md5:00ff');
    assert.equal(checksumOption(parseTransferUrl('root://se/f', { checksum: 'adler32' })), undefined);
    assert.equal(checksumOption(parseTransferUrl('root://se/f')), undefined);
  });

  it('maps dav/davs to http/https and keeps http(s) as they are', () => {
    const d = parseTransferUrl('davs://se.example.org/data/f');
    assert.equal(d.url.href, 'https://se.example.org/data/f');
    assert.equal(d.webdav, true);
    assert.equal(parseTransferUrl('dav://se.example.org:8080/x').url.href, 'http://se.example.org:8080/x');
    assert.equal(parseTransferUrl('HTTPS://se.example.org/x?a=b').url.href, 'https://se.example.org/x?a=b');
  });

  it('reads ARC URL options after the host and merges separately given ones', () => {
    const u = parseTransferUrl('https://se.example.org:443;cache=no;threads=2/data/f', { overwrite: 'no' });
    assert.equal(u.url.href, 'https://se.example.org/data/f');
    assert.equal(cacheMode(u), 'no');
    assert.equal(u.options.get('threads'), '2');
    assert.equal(overwriteAllowed(u), false);
    assert.equal(cacheMode(parseTransferUrl('http://h/x', { cache: 'copy' })), 'copy');
    assert.equal(cacheMode(parseTransferUrl('http://h/x')), 'yes');
  });

  it('refuses unsupported protocols and malformed URLs', () => {
    assert.equal(
      code(() => parseTransferUrl('gopher://se/x')),
      'CE_ERR_STAGING_BAD_URL',
    );
    // Grid protocols parse for gfal2: whether its plugin is installed is the stager's question.
    const grid = parseTransferUrl('root://127.0.0.1:1094;cache=no//data/x');
    assert.equal(grid.scheme, 'gfal2');
    assert.equal(grid.url.href, 'root://127.0.0.1:1094//data/x');
    assert.equal(cacheMode(grid), 'no');
    assert.equal(
      code(() => parseTransferUrl('ldap://se/x')),
      'CE_ERR_STAGING_BAD_URL',
    );
    assert.equal(
      code(() => parseTransferUrl('not a url')),
      'CE_ERR_STAGING_BAD_URL',
    );
    assert.equal(
      code(() => parseTransferUrl('https:///nohost')),
      'CE_ERR_STAGING_BAD_URL',
    );
    assert.equal(
      code(() => parseTransferUrl('file://otherhost/etc/passwd')),
      'CE_ERR_STAGING_BAD_URL',
    );
  });

  it('never shows passwords or token-like query values', () => {
    const u = parseTransferUrl('https://user:s3cret@se.example.org/f?X-Amz-Signature=abc123&authz=tok456&part=1');
    assert.doesNotMatch(u.display, /s3cret|abc123|tok456/);
    assert.match(u.display, /part=1/);
    assert.doesNotMatch(redactUrl('https://h/x?access_token=zzz999'), /zzz999/);
    // A malformed URL with a secret in it is not echoed either.
    try {
      parseTransferUrl('https://h:notaport/x?token=leak777');
      assert.fail('expected an error');
    } catch (e) {
      assert.doesNotMatch((e as Error).message, /leak777/);
    }
  });
});
