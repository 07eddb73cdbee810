// gfal2's errors (errno and message, as seen from xrootd) as the reasons a job fails with.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gfal2Error } from '../../src/staging/gfal2/classify.js';

describe('gfal2 failures as staging errors', () => {
  it("xrootd's 'Operation expired' is a stalled server (retryable timeout), not an expired credential", () => {
    const e = gfal2Error(116, 'Error on XrdCl::CopyProcess::Run(): [ERROR] Operation expired:  (source)');
    assert.equal(e.code, 'CE_ERR_STAGING_TIMEOUT');
    assert.equal(e.transient, true);
  });

  it('a socket timeout during the handshake is a timeout too', () => {
    assert.equal(gfal2Error(110, '[FATAL] Socket timeout:  (source)').code, 'CE_ERR_STAGING_TIMEOUT');
  });

  it('a refused or expired credential is a credential problem, not retried', () => {
    for (const m of [
      'Run: [FATAL] Auth failed: No protocols left to try (destination)',
      'Secgsi: proxy certificate expired',
    ]) {
      const e = gfal2Error(52, m);
      assert.equal(e.code, 'CE_ERR_STAGING_NO_CREDENTIAL', m);
      assert.notEqual(e.transient, true);
    }
  });

  it('missing file, permission and a dead server keep their reasons', () => {
    assert.equal(gfal2Error(2, 'No such file or directory').code, 'CE_ERR_STAGING_REMOTE_STATUS');
    assert.equal(gfal2Error(13, 'Permission denied').code, 'CE_ERR_STAGING_ACCESS_DENIED');
    assert.equal(gfal2Error(111, 'Connection refused').code, 'CE_ERR_STAGING_NETWORK');
  });
});
