// `ceres admin route` (src/cli/admin/route.ts): the dry run decides as a submission would
// (authorization, mapping, default queue, routes) and says why each earlier route did not
// match; every failure exits 1 with its step and reason.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from '../helpers/service.js';
import { ceresCli, type CliResult } from './cli.js';

const dir = tempDir('route-dry-run');
after(() => removeDir(dir));

const config = join(dir, 'ceres.json');
writeFileSync(
  config,
  JSON.stringify({
    stateDir: join(dir, 'state'),
    cluster: { queues: [{ name: 'main' }, { name: 'long' }] },
    authorization: {
      groups: [
        { name: 'atlas', match: [{ voms: '/atlas' }] },
        { name: 'users', match: [{ subjectPattern: '/O=Test/*' }] },
        { name: 'cms-token', match: [{ token: { issuer: 'https://iss', group: '/cms' } }] },
      ],
      allow: ['atlas', 'users', 'cms-token'],
    },
    accounts: { shared: ['daemon', 'bin', 'nobody'] },
    mapping: [
      { group: 'atlas', account: 'daemon' },
      { group: 'cms-token', account: 'bin' },
      { group: 'users', account: 'nobody' },
    ],
    routes: [
      { name: 'atlas-prod', match: { fqans: ['/atlas/Role=production'] }, partition: 'short', account: 'vo_a' },
      { name: 'cms', match: { tokenGroups: ['/cms'] }, partition: 'cmsq', qos: 'low' },
      { name: 'long', match: { queues: ['long'], maxWallTimeSeconds: 7200 }, partition: 'long', qos: 'low' },
    ],
  }),
);
const desc = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const longJob = desc('long.xrsl', '&(executable="/bin/true")(queue="long")(wallTime="60 minutes")');
const mainJob = desc('main.xrsl', '&(executable="/bin/true")');
const route = (...args: string[]): Promise<CliResult> => ceresCli(['admin', '--config', config, 'route', ...args]);
const jane = ['--subject', '/O=Test/CN=Jane'];

describe('ceres admin route: the dry run', () => {
  it('prints the route taken, its batch settings, the mapped account, and why each earlier route did not match', async () => {
    const r = await route(...jane, '--fqan', '/atlas/Role=production', '--description', longJob);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /taken: route atlas-prod, partition short, account vo_a/);
    assert.match(r.stdout, /runs as: daemon\n/);
    const other = await route(...jane, '--fqan', '/atlas', '--description', longJob);
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stdout, /route atlas-prod: not taken: FQANs \/atlas match none of \/atlas\/Role=production/);
    assert.match(other.stdout, /route cms: not taken: token groups \(none\) not among \/cms/);
    assert.match(other.stdout, /taken: route long, partition long, QoS low/);
    assert.match(other.stdout, /queue: long/);
  });

  it('a token caller is routed by its groups and mapped by its token rule (--json)', async () => {
    const r = await route(
      '--subject',
      'user1',
      '--issuer',
      'https://iss',
      '--token-groups',
      '/cms',
      '--description',
      mainJob,
      '--json',
    );
    assert.equal(r.code, 0, r.stderr);
    const j = r.json();
    assert.equal(j.route.name, 'cms');
    assert.equal(j.localAccount, 'bin');
    assert.equal(j.queue, 'main', 'the default queue applied');
  });

  it('a job no route takes exits 1 with each reason', async () => {
    const r = await route(...jane, '--description', mainJob);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /route long: not taken: queue main not among long/);
    assert.match(r.stderr, /route: no configured route takes this job/);
  });

  it('a description naming an unknown queue, or a broken one, or none at all, exits 1 saying so', async () => {
    const unknown = await route(...jane, '--description', desc('q.xrsl', '&(executable="/bin/true")(queue="nope")'));
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /description: .*nope/);
    const broken = await route(...jane, '--description', desc('b.xrsl', '&(executable='));
    assert.equal(broken.code, 1);
    assert.match(broken.stderr, /description: /);
    const missing = await route(...jane, '--description', join(dir, 'absent.xrsl'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read the description .*absent\.xrsl: ENOENT/);
  });

  it('a caller no group takes exits 1 at authorization; no --config or no --subject is refused', async () => {
    const r = await route('--subject', '/O=Elsewhere/CN=Mallory', '--description', mainJob);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /authorization: Not authorized/);
    const noConfig = await ceresCli(['admin', 'route', ...jane, '--description', mainJob]);
    assert.equal(noConfig.code, 1);
    assert.match(noConfig.stderr, /--config FILE is needed/);
    const noSubject = await route('--description', mainJob);
    assert.notEqual(noSubject.code, 0);
    assert.match(noSubject.stderr, /--subject/);
  });

  it('a broken configuration exits 1 naming the key', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ routes: [{ name: 'x', match: {}, partition: '--uid=0' }] }));
    const r = await ceresCli(['admin', '--config', bad, 'route', ...jane, '--description', mainJob]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /routes\.0\.partition/);
  });
});
