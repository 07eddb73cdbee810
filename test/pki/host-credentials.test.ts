/**
 * The host certificate and key read as a pair (src/pki/host-credentials.ts), at start and
 * on SIGHUP: a pair that does not belong together, or a certificate outside its validity,
 * is refused with a reason naming the file, so the running pair can be kept.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readHostCredentials } from '../../src/pki/host-credentials.js';
import { PkiError } from '../../src/pki/pki-error.js';
import { tempDir } from '../helpers/pki.js';
import { opensslCa, opensslCert, type OpensslCred } from '../helpers/openssl-ca.js';

const work = tempDir(after, 'ceres-host-creds-');
let host: OpensslCred;
let other: OpensslCred;

before(() => {
  const ca = opensslCa(work, 'ca', '/DC=org/DC=ceres-host/CN=Host CA');
  host = opensslCert(ca, 'host', '/DC=org/DC=ceres-host/CN=ce.example.org', { hosts: ['ce.example.org'] });
  other = opensslCert(ca, 'other', '/DC=org/DC=ceres-host/CN=other.example.org', { hosts: ['other.example.org'] });
});

describe('readHostCredentials', () => {
  it('reads a matching pair, with its subject, end of validity and fingerprint', () => {
    const c = readHostCredentials(host.cert, host.key);
    assert.equal(c.subject, '/DC=org/DC=ceres-host/CN=ce.example.org');
    assert.ok(c.notAfter.getTime() > Date.now());
    assert.match(c.fingerprint, /^[0-9a-f]{64}$/);
    assert.equal(c.certPem, host.pem);
  });

  it('refuses a key that is not the certificate’s (a renewal half done), naming both files', () => {
    assert.throws(
      () => readHostCredentials(host.cert, other.key),
      (e: unknown) =>
        e instanceof PkiError &&
        e.message.includes(`host key ${other.key} is not the key of the host certificate ${host.cert}`),
    );
  });

  it('refuses a certificate outside its validity period', () => {
    const now = Date.now();
    assert.throws(() => readHostCredentials(host.cert, host.key, now + 400 * 86400_000), /expired at/);
    assert.throws(() => readHostCredentials(host.cert, host.key, now - 86400_000), /not valid before/);
  });

  it('refuses missing, empty and garbled files with the reason', () => {
    assert.throws(() => readHostCredentials(join(work, 'absent.pem'), host.key), /cannot be read \(ENOENT\)/);
    const empty = join(work, 'empty.pem');
    writeFileSync(empty, '');
    assert.throws(() => readHostCredentials(empty, host.key), /no PEM certificate in the file/);
    assert.throws(() => readHostCredentials(host.cert, empty), /not a usable private key/);
    const cut = join(work, 'cut.pem');
    writeFileSync(cut, host.pem.replace(/^([^\n]*\n[^\n]{10})[\s\S]*?(-----END)/, '$1\n$2'));
    assert.throws(() => readHostCredentials(cut, host.key), PkiError);
  });
});
