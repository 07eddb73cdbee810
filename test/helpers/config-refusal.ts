/** The ConfigError a configuration is refused with (fails the test when it is accepted). */
import assert from 'node:assert/strict';
import { buildConfig, ConfigError } from '../../src/config/load.js';

export function configRefusal(raw: unknown): ConfigError {
  try {
    buildConfig(raw);
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e;
  }
  assert.fail('accepted');
}
