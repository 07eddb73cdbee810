/** The web interface's configuration: site administrators, validated at load. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig, ConfigError } from '../../src/config/load.js';

describe('web.admins', () => {
  it('defaults to none and accepts DNs and token identities', () => {
    assert.deepEqual(buildConfig({}).web.admins, []);
    const admins = ['/O=Grid/CN=Jane Admin', 'https://issuer.example/realm#4f0a-77'];
    assert.deepEqual(buildConfig({ web: { admins } }).web.admins, admins);
  });

  it('refuses what is no identity, duplicates and unknown keys, naming the key', () => {
    for (const [web, key] of [
      [{ admins: ['CN=Jane'] }, 'web.admins.0'],
      [{ admins: [''] }, 'web.admins.0'],
      [{ admins: ['https://issuer.example'] }, 'web.admins.0'],
      [{ admins: ['/O=Grid/CN=a', '/O=Grid/CN=a'] }, 'web.admins'],
      [{ admins: '/O=Grid/CN=a' }, 'web.admins'],
      [{ admin: ['/O=Grid/CN=a'] }, 'web'],
    ] as const) {
      assert.throws(
        () => buildConfig({ web }),
        (e: unknown) => e instanceof ConfigError && e.message.includes(`'${key}`),
        JSON.stringify(web),
      );
    }
  });
});
