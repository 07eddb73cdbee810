// Configuration: defaults from the schema, validation naming the key, and the CLI
// refusing a bad file with a non-zero exit and that message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildConfig, ConfigError, loadConfig } from '../../src/config/load.js';
import { removeDir, tempDir } from '../helpers/service.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

function keyOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ConfigError, String(e));
    return e.key;
  }
  assert.fail('no error');
}

describe('configuration', () => {
  it('an empty configuration gets every default', () => {
    const c = buildConfig({});
    assert.equal(c.listen, '127.0.0.1:8443');
    assert.equal(c.mountPoint, '/arex');
    assert.deepEqual(
      c.cluster.queues.map((q) => q.name),
      ['main'],
    );
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.cluster));
    assert.equal(c.tls.crlRecheckSeconds, 30);
  });

  it('errors name the key', () => {
    assert.equal(
      keyOf(() => buildConfig({ listen: 'nope' })),
      'listen',
    );
    assert.equal(
      keyOf(() => buildConfig({ listen: '127.0.0.1:99999' })),
      'listen',
    );
    assert.equal(
      keyOf(() => buildConfig({ bogus: 1 })),
      'bogus',
    );
    assert.equal(
      keyOf(() => buildConfig({ tls: { hostCert: 1 } })),
      'tls.hostCert',
    );
    assert.equal(
      keyOf(() => buildConfig({ tls: { hostCert: '/x' } })),
      'tls.hostKey',
    );
    assert.equal(
      keyOf(() => buildConfig({ tls: { crlRecheckSeconds: 0.5 } })),
      'tls.crlRecheckSeconds',
    );
    assert.equal(
      keyOf(() => buildConfig({ cluster: { queues: [{ name: 'a' }, { name: 'a' }] } })),
      'cluster.queues.1.name',
    );
    assert.equal(
      keyOf(() => buildConfig({ cluster: { defaultQueue: 'x' } })),
      'cluster.defaultQueue',
    );
    assert.equal(
      keyOf(() => buildConfig({ mountPoint: 'arex' })),
      'mountPoint',
    );
    assert.equal(
      keyOf(() => buildConfig({ engine: { maxRunningJobs: -1 } })),
      'engine.maxRunningJobs',
    );
  });

  it('a file that is not JSON, or missing, is refused with its name', () => {
    const d = tempDir('cfg');
    try {
      writeFileSync(join(d, 'bad.json'), '{ listen: 1');
      assert.throws(() => loadConfig(join(d, 'bad.json')), /not valid JSON/);
      assert.throws(() => loadConfig(join(d, 'missing.json')), /cannot read config file/);
      writeFileSync(
        join(d, 'ok.json'),
        JSON.stringify({ stateDir: 'st', tls: { hostCert: 'h.pem', hostKey: 'k.pem', caDir: 'ca' } }),
      );
      const c = loadConfig(join(d, 'ok.json'));
      assert.equal(c.stateDir, join(d, 'st'));
      assert.equal(c.tls.hostCert, join(d, 'h.pem'));
    } finally {
      removeDir(d);
    }
  });

  it('`ceres serve` with a bad config exits 2 naming the key', async () => {
    const d = tempDir('cfg');
    try {
      writeFileSync(join(d, 'c.json'), JSON.stringify({ cluster: { queues: [] } }));
      const r = await new Promise<{ code: number | null; stderr: string }>((res) => {
        execFile(
          process.execPath,
          [MAIN, 'serve', '--config', join(d, 'c.json'), '--state-dir', join(d, 's')],
          (err, _o, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
        );
      });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /config key 'cluster\.queues'/);
    } finally {
      removeDir(d);
    }
  });
});
