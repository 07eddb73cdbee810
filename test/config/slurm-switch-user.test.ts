// `lrms.slurm.switchUser`: sbatch runs as a job's account through `runuser` from a root
// service. `sudo` is not offered (a service that is not root refuses a mapping, so a sudo
// rule could never be reached): a configuration naming it is refused with the key, the
// reason and what to do instead, never accepted and left to fail jobs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from '../../src/config/load.js';
import { configRefusal } from '../helpers/config-refusal.js';
import { switchUserPrefix } from '../../src/lrms/slurm/submission.js';

describe('lrms.slurm.switchUser', () => {
  it('defaults to runuser, and runuser may be named', () => {
    assert.equal(buildConfig({}).lrms.slurm.switchUser, 'runuser');
    assert.equal(buildConfig({ lrms: { slurm: { switchUser: 'runuser' } } }).lrms.slurm.switchUser, 'runuser');
    assert.deepEqual(switchUserPrefix('runuser', 'atlas001'), ['runuser', '-u', 'atlas001', '--']);
    assert.deepEqual(switchUserPrefix('runuser', undefined), []);
  });

  it('sudo is refused naming the key, the reason and the alternative', () => {
    const e = configRefusal({ lrms: { backend: 'slurm', slurm: { switchUser: 'sudo' } } });
    assert.equal(e.key, 'lrms.slurm.switchUser');
    assert.match(e.message, /sudo/);
    assert.match(e.message, /root/);
    assert.match(e.message, /runuser/);
  });

  it('any other value is refused naming the key', () => {
    for (const v of ['su', '', 42, null, ['runuser']])
      assert.equal(
        configRefusal({ lrms: { slurm: { switchUser: v } } }).key,
        'lrms.slurm.switchUser',
        JSON.stringify(v),
      );
  });
});
