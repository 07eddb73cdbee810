// Every path key of the configuration is relative to the configuration file's folder,
// through one resolver. Before, tokens.issuers[].jwksFile, lrms.slurm.slurmConf and
// lrms.slurm.binDir were taken relative to the working directory (the jwksFile then
// "did not exist" and clients got a 401 blaming the key id).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from '../../src/config/load.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { pathKeys, resolvePaths } from '../../src/config/paths.js';

const BASE = '/etc/ceres';

describe('path keys of the configuration', () => {
  it('are exactly the keys that name files or folders', () => {
    assert.deepEqual(pathKeys(ConfigSchema).sort(), [
      'authorization.groups[].match[].gridMapFile',
      'cluster.runtimeEnvironments[].script',
      'infosys.ldap.ldifFile',
      'log.file',
      'lrms.gridengine.binDir',
      'lrms.gridengine.sgeRoot',
      'lrms.kubernetes.kubeconfig',
      'lrms.slurm.binDir',
      'lrms.slurm.slurmConf',
      'mapping[].gridMapFile',
      'sessions.root',
      'staging.gfal2.s3Endpoints[].accessKeyFile',
      'staging.gfal2.s3Endpoints[].secretKeyFile',
      'stateDir',
      'tls.caDir',
      'tls.hostCert',
      'tls.hostKey',
      'tokens.issuers[].jwksFile',
      'vomsDir',
    ]);
  });

  it('are each resolved against the folder of the configuration file', () => {
    const c = buildConfig(
      {
        stateDir: 'state',
        vomsDir: 'vomsdir',
        tls: { hostCert: 'pki/cert.pem', hostKey: 'pki/key.pem', caDir: 'certificates' },
        log: { file: 'log/ceres.log' },
        cluster: { runtimeEnvironments: [{ name: 'ENV/X', script: 'rte/x.sh' }] },
        authorization: { groups: [{ name: 'g', match: [{ gridMapFile: 'gm-a' }] }], allow: ['g'] },
        mapping: [{ group: 'g', gridMapFile: 'gm-b' }],
        tokens: { issuers: [{ issuer: 'https://iss.example', jwksFile: 'keys/iss.jwks' }] },
        lrms: { backend: 'slurm', slurm: { slurmConf: 'slurm/slurm.conf', binDir: 'slurm/bin' } },
      },
      {},
      BASE,
      '/somewhere/else',
    );
    assert.equal(c.stateDir, '/etc/ceres/state');
    assert.equal(c.vomsDir, '/etc/ceres/vomsdir');
    assert.deepEqual(
      [c.tls.hostCert, c.tls.hostKey, c.tls.caDir],
      ['/etc/ceres/pki/cert.pem', '/etc/ceres/pki/key.pem', '/etc/ceres/certificates'],
    );
    assert.equal(c.log.file, '/etc/ceres/log/ceres.log');
    assert.equal(c.cluster.runtimeEnvironments[0]?.script, '/etc/ceres/rte/x.sh');
    assert.equal(c.authorization?.groups[0]?.match[0]?.gridMapFile, '/etc/ceres/gm-a');
    assert.equal(c.mapping[0]?.gridMapFile, '/etc/ceres/gm-b');
    assert.equal(c.tokens.issuers[0]?.jwksFile, '/etc/ceres/keys/iss.jwks');
    assert.equal(c.lrms.slurm.slurmConf, '/etc/ceres/slurm/slurm.conf');
    assert.equal(c.lrms.slurm.binDir, '/etc/ceres/slurm/bin');
  });

  it('keeps absolute paths, and empty values that mean "not set"', () => {
    const c = buildConfig({ stateDir: '/var/lib/ceres', lrms: { slurm: { binDir: '' } } }, {}, BASE);
    assert.equal(c.stateDir, '/var/lib/ceres');
    assert.equal(c.lrms.slurm.binDir, '');
    assert.equal(c.lrms.slurm.slurmConf, '');
  });

  it('takes --state-dir relative to the working directory, as a command-line path', () => {
    assert.equal(buildConfig({}, { stateDir: 'var2' }, BASE, '/home/admin').stateDir, '/home/admin/var2');
  });

  it('does not change the object it is given', () => {
    const raw = { stateDir: 'x', mapping: [] };
    const out = resolvePaths(ConfigSchema, raw, BASE);
    assert.equal(raw.stateDir, 'x');
    assert.equal(out.stateDir, '/etc/ceres/x');
  });
});
