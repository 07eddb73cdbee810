// The authorization configuration: the example loads as written; every
// mistake is refused at load with the key and a clear message.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildConfig } from '../../src/config/load.js';
import { configRefusal } from '../helpers/config-refusal.js';

const EXAMPLE = {
  authorization: {
    groups: [
      { name: 'admins', match: [{ subject: '/O=Site/CN=Site Admin' }] },
      { name: 'atlas', match: [{ voms: '/atlas' }] },
      { name: 'local', match: [{ gridMapFile: '/etc/grid-security/grid-mapfile' }] },
    ],
    allow: ['atlas', 'local'],
  },
  mapping: [
    { group: 'local', gridMapFile: '/etc/grid-security/grid-mapfile' },
    { group: 'atlas', pool: { accounts: ['atlas001', 'atlas002', 'atlas003'] } },
  ],
  cluster: { queues: [{ name: 'main', allow: ['atlas', 'local'] }] },
};

const refused = configRefusal;

const withGroups = (extra: Record<string, unknown>, groups: unknown[] = [{ name: 'g', match: [{ all: true }] }]) => ({
  authorization: { groups, allow: ['g'] },
  ...extra,
});

describe('authorization configuration', () => {
  it("the issue's example loads as written, with defaults filled", () => {
    const c = buildConfig(EXAMPLE);
    assert.equal(c.authorization?.groups.length, 3);
    assert.equal(c.mapping[1]?.pool?.idleReleaseDays, 30);
    assert.deepEqual(c.cluster.queues[0]?.allow, ['atlas', 'local']);
  });

  it('without the section: no authorization, no mapping', () => {
    const c = buildConfig({});
    assert.equal(c.authorization, undefined);
    assert.deepEqual(c.mapping, []);
  });

  it('relative grid-mapfile paths are resolved against the config file folder', () => {
    const c = buildConfig(
      withGroups({ mapping: [{ group: 'g', gridMapFile: 'gm' }] }, [{ name: 'g', match: [{ gridMapFile: 'sub/gm' }] }]),
      {},
      '/etc/ceres',
    );
    assert.equal(c.authorization?.groups[0]?.match[0]?.gridMapFile, '/etc/ceres/sub/gm');
    assert.equal(c.mapping[0]?.gridMapFile, '/etc/ceres/gm');
  });

  it('unknown group names in allow, mapping and queues are refused, naming the key and the group', () => {
    let e = refused({ ...EXAMPLE, authorization: { ...EXAMPLE.authorization, allow: ['atlas', 'cms'] } });
    assert.equal(e.key, 'authorization.allow.1');
    assert.match(e.message, /unknown authorization group 'cms' \(defined: admins, atlas, local\)/);
    e = refused({ ...EXAMPLE, mapping: [{ group: 'cms', account: 'cms001' }] });
    assert.equal(e.key, 'mapping.0.group');
    assert.match(e.message, /'cms'/);
    e = refused({ ...EXAMPLE, cluster: { queues: [{ name: 'main' }, { name: 'long', allow: ['atlas', 'nobody'] }] } });
    assert.equal(e.key, 'cluster.queues.1.allow.1');
    assert.match(e.message, /'nobody'/);
  });

  it('group references without an authorization section are refused', () => {
    let e = refused({ cluster: { queues: [{ name: 'main', allow: ['atlas'] }] } });
    assert.equal(e.key, 'cluster.queues.0.allow.0');
    assert.match(e.message, /no authorization section/);
    e = refused({ mapping: [{ group: 'atlas', account: 'a' }] });
    assert.equal(e.key, 'mapping.0.group');
  });

  it('a match rule has exactly one key', () => {
    let e = refused(withGroups({}, [{ name: 'g', match: [{}] }]));
    assert.equal(e.key, 'authorization.groups.0.match.0');
    assert.match(e.message, /exactly one of .* \(found none\)/);
    e = refused(withGroups({}, [{ name: 'g', match: [{ all: true }, { subject: '/CN=a', voms: '/atlas' }] }]));
    assert.equal(e.key, 'authorization.groups.0.match.1');
    assert.match(e.message, /found subject, voms/);
    assert.equal(
      refused(withGroups({}, [{ name: 'g', match: [{ dn: '/CN=a' }] }])).key,
      'authorization.groups.0.match.0.dn',
    );
  });

  it('a mapping entry has exactly one of gridMapFile, account, pool', () => {
    let e = refused(withGroups({ mapping: [{ group: 'g' }] }));
    assert.equal(e.key, 'mapping.0');
    e = refused(withGroups({ mapping: [{ group: 'g', account: 'a', pool: { accounts: ['b'] } }] }));
    assert.match(e.message, /found account, pool/);
  });

  it('bad values are refused: FQAN pattern, account names, empty lists, duplicate groups, shared pool accounts', () => {
    assert.equal(
      refused(withGroups({}, [{ name: 'g', match: [{ voms: 'atlas' }] }])).key,
      'authorization.groups.0.match.0.voms',
    );
    const e = refused(withGroups({}, [{ name: 'g', match: [{ voms: '/atlas/Role=x/prod' }] }]));
    assert.equal(e.key, 'authorization.groups.0.match.0.voms');
    assert.match(e.message, /after Role/);
    assert.equal(refused(withGroups({ mapping: [{ group: 'g', account: 'root;x' }] })).key, 'mapping.0.account');
    assert.equal(
      refused(withGroups({ mapping: [{ group: 'g', pool: { accounts: [] } }] })).key,
      'mapping.0.pool.accounts',
    );
    assert.equal(
      refused(withGroups({ mapping: [{ group: 'g', pool: { accounts: ['a'], idleReleaseDays: 0 } }] })).key,
      'mapping.0.pool.idleReleaseDays',
    );
    assert.equal(
      refused({ authorization: { groups: [{ name: 'g', match: [{ all: true }] }], allow: [] } }).key,
      'authorization.allow',
    );
    assert.equal(
      refused({ authorization: { groups: [{ name: 'g', match: [] }], allow: ['g'] } }).key,
      'authorization.groups.0.match',
    );
    assert.equal(
      refused(
        withGroups({}, [
          { name: 'g', match: [{ all: true }] },
          { name: 'g', match: [{ all: true }] },
        ]),
      ).key,
      'authorization.groups.1.name',
    );
    const shared = refused(
      withGroups({
        mapping: [
          { group: 'g', pool: { accounts: ['p1', 'p2'] } },
          { group: 'g', pool: { accounts: ['p3', 'p2'] } },
        ],
      }),
    );
    assert.equal(shared.key, 'mapping.1.pool.accounts');
    assert.match(shared.message, /'p2'.*mapping\.0/);
    assert.equal(
      refused(withGroups({}, [{ name: 'g', match: [{ token: { subject: 'x' } }] }])).key,
      'authorization.groups.0.match.0.token.issuer',
    );
  });
});
