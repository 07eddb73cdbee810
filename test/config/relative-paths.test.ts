// Every path key of a configuration file is relative to the file, not to the working
// directory: log.file, runtime-environment scripts and vomsDir included.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/load.js';
import { removeDir, tempDir } from '../helpers/service.js';

describe('relative paths in the configuration file', () => {
  const dir = tempDir('relpaths');
  after(() => removeDir(dir));
  const file = join(dir, 'etc', 'ceres.json');
  mkdirSync(join(dir, 'etc'), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify({
      stateDir: 'state',
      log: { file: 'logs/ceres.log' },
      vomsDir: 'vomsdir',
      cluster: {
        runtimeEnvironments: [
          { name: 'ENV/A', script: 'rte/a.sh' },
          { name: 'ENV/B', script: '/opt/rte/b.sh' },
          { name: 'ENV/C' },
        ],
      },
    }),
  );

  it('are resolved against the directory of the file, whatever the working directory', () => {
    const c = loadConfig(file, {}, '/');
    assert.equal(c.stateDir, join(dir, 'etc', 'state'));
    assert.equal(c.log.file, join(dir, 'etc', 'logs', 'ceres.log'));
    assert.equal(c.vomsDir, join(dir, 'etc', 'vomsdir'));
    assert.deepEqual(
      c.cluster.runtimeEnvironments.map((r) => r.script),
      [join(dir, 'etc', 'rte', 'a.sh'), '/opt/rte/b.sh', undefined],
    );
  });

  it('absolute paths and command-line overrides are left as given (overrides relative to the working directory)', () => {
    const c = loadConfig(file, { stateDir: 'other' }, '/srv');
    assert.equal(c.stateDir, '/srv/other');
    assert.equal(c.cluster.runtimeEnvironments[1]!.script, '/opt/rte/b.sh');
  });
});
