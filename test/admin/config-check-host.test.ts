// `ceres admin config check` runs the checks of the configuration against this host that
// `ceres serve` runs, from one list (src/service/config-checks.ts), and prints every
// problem, not just the first; the start refuses on the same problems. Before, the check
// passed a missing grid-mapfile, a missing slurm.conf, Slurm commands not on PATH, a
// missing or broken jwksFile and a host key that is not the certificate's, and each
// surfaced only later (a start that crashed with a stack, or failing jobs and tokens).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, tempDir } from '../helpers/service.js';
import { initDevPki } from '../../src/pki/dev-pki.js';
import { createAccount, isRoot, removeAccounts, skipUnlessRoot } from '../helpers/local-accounts.js';
import { ceresCli, type CliResult } from './cli.js';

const dir = tempDir('config-host');
after(() => removeDir(dir));

let n = 0;
function file(config: object): string {
  const f = join(dir, `c${n++}.json`);
  writeFileSync(f, JSON.stringify({ stateDir: join(dir, `state${n}`), ...config }));
  return f;
}
const check = (config: object, env?: NodeJS.ProcessEnv): Promise<CliResult> =>
  ceresCli(['admin', 'config', 'check', file(config)], env);

const slurm = (slurmConf: string, binDir = ''): object => ({
  lrms: { backend: 'slurm', slurm: { slurmConf, binDir } },
});

describe('config check: the configuration against this host', () => {
  const gridMap = join(dir, 'grid-mapfile');
  const slurmConf = join(dir, 'slurm.conf');
  const jwks = join(dir, 'iss.jwks');
  before(() => {
    writeFileSync(gridMap, '"/O=Test/CN=Someone" nobody\n');
    writeFileSync(slurmConf, 'ClusterName=test\n');
    writeFileSync(jwks, JSON.stringify({ keys: [{ kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' }] }));
  });

  it('names a missing grid-mapfile of an authorization rule and of a mapping entry, both at once', async () => {
    const r = await check({
      authorization: { groups: [{ name: 'local', match: [{ gridMapFile: 'nowhere/rules' }] }], allow: ['local'] },
      mapping: [{ group: 'local', gridMapFile: 'nowhere/map' }],
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(
        `config key 'authorization\\.groups\\.0\\.match\\.0\\.gridMapFile': ${dir}/nowhere/rules: does not exist`,
      ),
    );
    assert.match(r.stderr, new RegExp(`config key 'mapping\\.0\\.gridMapFile': ${dir}/nowhere/map: does not exist`));
  });

  it('names a missing slurm.conf, and one named by the service environment SLURM_CONF', async () => {
    const r = await check(slurm('nowhere/slurm.conf'));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      new RegExp(`config key 'lrms\\.slurm\\.slurmConf': ${dir}/nowhere/slurm\\.conf: does not exist`),
    );
    const env = await check(slurm(''), { ...process.env, SLURM_CONF: join(dir, 'absent.conf') });
    assert.equal(env.code, 1);
    assert.match(
      env.stderr,
      /lrms\.slurm\.slurmConf': empty, and the service's SLURM_CONF names .*absent\.conf, which does not exist/,
    );
  });

  it('names an empty Kubernetes mount path and a kubeconfig that is not there', async () => {
    const r = await check({ lrms: { backend: 'kubernetes', kubernetes: { kubeconfig: 'nowhere/kubeconfig' } } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config key 'lrms\.kubernetes\.volume\.mountPath': empty: name where the pods see/);
    assert.match(
      r.stderr,
      new RegExp(`config key 'lrms\\.kubernetes\\.kubeconfig': ${dir}/nowhere/kubeconfig: does not exist`),
    );
    // With a mount path and no kubeconfig (the client finds its own), nothing of Kubernetes is named.
    const ok = await check({ lrms: { backend: 'kubernetes', kubernetes: { volume: { mountPath: dir } } } });
    assert.doesNotMatch(ok.stderr, /lrms\.kubernetes/);
  });

  it("names the Slurm commands missing from binDir, or from the service's PATH", async () => {
    const empty = join(dir, 'bin-empty');
    mkdirSync(empty, { recursive: true });
    const r = await check(slurm(slurmConf, empty));
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /config key 'lrms\.slurm\.binDir': .*bin-empty holds no executable sbatch, squeue, scancel, scontrol, sinfo/,
    );
    const path = await check(slurm(slurmConf), { ...process.env, PATH: empty });
    assert.equal(path.code, 1);
    assert.match(path.stderr, /sbatch, squeue, scancel, scontrol, sinfo not found on the service's PATH/);
  });

  it('names a missing jwksFile, one that is not JSON, and one without keys', async () => {
    const bad = join(dir, 'bad.jwks');
    const none = join(dir, 'none.jwks');
    writeFileSync(bad, '{"keys": [');
    writeFileSync(none, '{"keys": []}');
    const r = await check({
      tokens: {
        issuers: [
          { issuer: 'https://a.example', jwksFile: 'nowhere.jwks' },
          { issuer: 'https://b.example', jwksFile: bad },
          { issuer: 'https://c.example', jwksFile: none },
        ],
      },
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config key 'tokens\.issuers\.0\.jwksFile': .*nowhere\.jwks: does not exist/);
    assert.match(r.stderr, /config key 'tokens\.issuers\.1\.jwksFile': .*bad\.jwks: not JSON/);
    assert.match(r.stderr, /config key 'tokens\.issuers\.2\.jwksFile': .*none\.jwks: the JWK set holds no keys/);
  });

  it('names a host key that is not the certificate key, and a certificate that is not PEM', async () => {
    const a = await initDevPki(join(dir, 'pki-a'));
    const b = await initDevPki(join(dir, 'pki-b'));
    const tls = (hostCert: string, hostKey: string) => ({
      tls: { hostCert, hostKey, caDir: a.files.certificatesDir },
    });
    const r = await check(tls(a.files.hostCert, b.files.hostKey));
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config key 'tls\.hostKey': .*pki-b.* is not the key of the certificate .*pki-a/);
    const notPem = await check(tls(gridMap, a.files.hostKey));
    assert.equal(notPem.code, 1);
    assert.match(notPem.stderr, /config key 'tls\.hostCert': .*grid-mapfile: not a PEM certificate/);
  });

  it('warns (and fails) when voms rules would match nobody: the VOMS folder does not exist', async () => {
    const r = await check({
      vomsDir: 'no-vomsdir',
      authorization: { groups: [{ name: 'atlas', match: [{ voms: '/atlas' }] }], allow: ['atlas'] },
    });
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /warning: config key 'vomsDir': .*no-vomsdir does not exist, so no VOMS attribute is verified/,
    );
  });

  it('names a pool account that is also a fixed mapping, with the other problems of the file', async () => {
    const r = await check({
      authorization: { groups: [{ name: 'a', match: [{ all: true }] }], allow: ['a'] },
      mapping: [
        { group: 'a', pool: { accounts: ['pool001'] } },
        { group: 'a', account: 'pool001' },
      ],
    });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /config key 'mapping\.1\.account': account 'pool001' is also in the pool of mapping\.0/);
  });

  it('passes a configuration whose files, key pair, Slurm commands and VOMS folder are all there', async () => {
    const a = await initDevPki(join(dir, 'pki-ok'));
    mkdirSync(join(dir, 'vomsdir'), { recursive: true });
    const r = await check({
      tls: { hostCert: a.files.hostCert, hostKey: a.files.hostKey, caDir: a.files.certificatesDir },
      vomsDir: 'vomsdir',
      authorization: {
        groups: [
          { name: 'local', match: [{ gridMapFile: gridMap }] },
          { name: 'atlas', match: [{ voms: '/atlas' }] },
        ],
        allow: ['local', 'atlas'],
      },
      tokens: { issuers: [{ issuer: 'https://a.example', jwksFile: jwks }] },
      ...slurm(slurmConf, '/usr/bin'),
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /OK/);
  });

  it("routes' partition, QoS and account on a Slurm that cannot be asked: warnings naming the failed command, no error", async () => {
    const r = await check({
      ...slurm(slurmConf, '/usr/bin'),
      routes: [{ name: 'a', match: {}, partition: 'short', qos: 'low', account: 'vo_a' }],
    });
    // Listed (the check exits 1 on warnings too), but only as warnings: the start is not refused.
    assert.equal(r.code, 1, r.stderr);
    const out = r.stdout + r.stderr;
    for (const line of out.split('\n').filter((l) => l.includes('config key')))
      assert.match(line, /: warning: /, 'no error');
    assert.match(
      out,
      /warning: config key 'routes\.0\.partition': the routes' partition names were not checked: `sinfo -h -a -o %R` failed \(.*SlurmctldHost/,
    );
    assert.match(
      out,
      /warning: config key 'routes\.0\.qos': the routes' QoS names were not checked: `sacctmgr .*` failed/,
    );
    assert.match(out, /warning: config key 'routes\.0\.account': the routes' account names were not checked/);
  });

  it('the start refuses on the same problems, every one named, before anything listens', async () => {
    const f = file({
      listen: '127.0.0.1:0',
      authorization: { groups: [{ name: 'local', match: [{ gridMapFile: 'nowhere/rules' }] }], allow: ['local'] },
      tokens: { issuers: [{ issuer: 'https://a.example', jwksFile: 'nowhere.jwks' }] },
      ...slurm('nowhere/slurm.conf'),
    });
    const r = await ceresCli(['serve', '--config', f]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /the configuration cannot work on this host/);
    assert.match(r.stderr, /config key 'authorization\.groups\.0\.match\.0\.gridMapFile': .*does not exist/);
    assert.match(r.stderr, /config key 'tokens\.issuers\.0\.jwksFile': .*does not exist/);
    assert.match(r.stderr, /config key 'lrms\.slurm\.slurmConf': .*does not exist/);
    assert.doesNotMatch(r.stderr, /service URL/);
  });
});

describe(
  'config check: the sessions folder reached by the mapped accounts',
  { skip: skipUnlessRoot('the sessions folder check') },
  () => {
    after(() => {
      if (isRoot) removeAccounts();
    });

    it('names the mapped account that cannot pass a folder above sessions.root, and where it stops', async () => {
      const acct = createAccount();
      const closed = join(dir, 'closed');
      mkdirSync(join(closed, 'sessions'), { recursive: true });
      chmodSync(closed, 0o700);
      const mapped = {
        authorization: { groups: [{ name: 'one', match: [{ subject: '/O=Test/CN=One' }] }], allow: ['one'] },
        mapping: [{ group: 'one', account: acct.name }],
      };
      const r = await check({ ...mapped, sessions: { root: join(closed, 'sessions') } });
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        new RegExp(
          `config key 'sessions\\.root': the local accounts jobs run as cannot reach the sessions folder .*: ${acct.name} \\(stopped at ${closed}\\)`,
        ),
      );
      chmodSync(closed, 0o711);
      const ok = await check({ ...mapped, sessions: { root: join(closed, 'sessions') } });
      assert.equal(ok.code, 0, ok.stderr);
    });
  },
);
