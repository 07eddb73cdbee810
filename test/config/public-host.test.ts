// A wildcard listen address never becomes a `localhost` URL: the unit rule, and the real
// service listening on 0.0.0.0 printing and publishing the machine's name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { defaultPublicHost } from '../../src/config/public-host.js';
import { removeDir, startCeres, stopCeres } from '../helpers/service.js';

describe('public host name', () => {
  it('an address as given is used as given; a wildcard one becomes the machine name', () => {
    assert.equal(defaultPublicHost('127.0.0.1', 'ce1.example.org'), '127.0.0.1');
    assert.equal(defaultPublicHost('ce.example.org', 'other'), 'ce.example.org');
    assert.equal(defaultPublicHost('0.0.0.0', 'ce1.example.org'), 'ce1.example.org');
    assert.equal(defaultPublicHost('::', 'ce1.example.org'), 'ce1.example.org');
  });

  it('the service listening on 0.0.0.0 without a configured name prints no localhost URL', async () => {
    const ceres = await startCeres({ listen: '0.0.0.0:0' });
    try {
      assert.doesNotMatch(ceres.url, /localhost/);
      assert.equal(new URL(ceres.url).hostname, hostname().toLowerCase());
    } finally {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });
});
