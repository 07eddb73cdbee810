/**
 * The service's LDIF writer refuses to start rather than publish nowhere or to anyone:
 * an unknown reader group, a folder it cannot make; and the configuration refuses
 * values that cannot work. The working case runs in test/e2e/resource-bdii.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startCeres, tempDir } from '../helpers/service.js';
import { configRefusal } from '../helpers/config-refusal.js';

describe('infosys.ldap: refusals', () => {
  let dir: string;
  before(() => {
    dir = tempDir('infosys');
  });
  after(() => removeDir(dir));

  const ldap = (over: Record<string, unknown>): Record<string, unknown> => ({
    infosys: { ldap: { enabled: true, ldifFile: join(dir, 'out', 'glue2.ldif'), ...over } },
  });

  it('a reader group that does not exist: the service does not start, and says which key', async () => {
    await assert.rejects(
      startCeres({ stateDir: join(dir, 's1'), config: ldap({ readerGroup: 'no-such-group-ceres' }) }),
      /infosys\.ldap\.readerGroup: no group no-such-group-ceres/,
    );
  });

  it('a folder that cannot be made (a file is in the way): the service does not start', async () => {
    const blocker = join(dir, 'blocker');
    writeFileSync(blocker, '');
    await assert.rejects(
      startCeres({
        stateDir: join(dir, 's2'),
        config: ldap({ readerGroup: 'root', ldifFile: join(blocker, 'glue2.ldif') }),
      }),
      /infosys\.ldap\.ldifFile: cannot prepare .*blocker/,
    );
  });

  it('the configuration refuses a port out of range, a short interval and an empty group', () => {
    assert.match(configRefusal({ infosys: { ldap: { port: 70000 } } }).message, /infosys\.ldap\.port/);
    assert.match(configRefusal({ infosys: { ldap: { updateIntervalSeconds: 1 } } }).message, /updateIntervalSeconds/);
    assert.match(configRefusal({ infosys: { ldap: { readerGroup: '' } } }).message, /readerGroup/);
    assert.match(configRefusal({ infosys: { ldap: { unknown: 1 } } }).message, /infosys\.ldap/);
  });
});
