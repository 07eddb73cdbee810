// Job credential copies with real accounts: the copy is the account's (0600), readable
// by it and by no other account, and the account can neither remove nor replace it;
// a renewal rewrites it (also after a restart of the service); an account that does not
// resolve gets no copy at all.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobCredentials, proxyFileText, type JobCredentialSource } from '../../src/accounts/job-credentials.js';
import { AccountResolver } from '../../src/accounts/resolve-account.js';
import type { DelegatedCredential } from '../../src/vocabulary/delegations.js';
import { CeError } from '../../src/errors/ce-error.js';
import {
  assertRoot,
  createAccount,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

const pem = (tag: string, body: string): string =>
  `-----BEGIN ${tag}-----\n${Buffer.from(body).toString('base64')}\n-----END ${tag}-----\n`;
const x509 = (n: number): DelegatedCredential => ({
  kind: 'x509',
  certChainPem: pem('CERTIFICATE', `proxy${n}`) + pem('CERTIFICATE', 'user'),
  keyPem: pem('RSA PRIVATE KEY', `key${n}`),
});

/** Alice's owner key (the RFC 4514 form of `/CN=alice`). */
const ALICE = 'CN=alice';

/** The delegation service's answer, as the test sets it. */
class Source implements JobCredentialSource {
  readonly creds = new Map<string, DelegatedCredential>();
  credentialFor(id: string, owner: string): Promise<DelegatedCredential | undefined> {
    return Promise.resolve(owner === ALICE ? this.creds.get(id) : undefined);
  }
}

describe('proxy file layout', () => {
  it('puts the key right after the proxy certificate, the rest of the chain after it', () => {
    const t = proxyFileText(x509(1) as { certChainPem: string; keyPem: string });
    assert.deepEqual(
      [...t.matchAll(/-----BEGIN ([A-Z ]+)-----/g)].map((m) => m[1]),
      ['CERTIFICATE', 'RSA PRIVATE KEY', 'CERTIFICATE'],
    );
    assert.ok(t.startsWith(pem('CERTIFICATE', 'proxy1')));
  });
});

describe(
  'job credential copies under local accounts',
  { skip: skipUnlessRoot('credential copies for local accounts') },
  () => {
    let a: TestAccount;
    let b: TestAccount;
    let root = '';
    let dir = '';
    const source = new Source();
    let creds: JobCredentials;
    before(async () => {
      assertRoot();
      a = createAccount();
      b = createAccount();
      root = await mkdtemp(join(tmpdir(), 'ceres-jobcreds-'));
      await chmod(root, 0o711);
      dir = join(root, 'job-credentials');
      creds = await JobCredentials.open({ dir, source, accounts: new AccountResolver() });
    });
    after(async () => {
      removeAccounts();
      if (root) await rm(root, { recursive: true, force: true });
    });

    const as = (acct: TestAccount, cmd: string): { out: string; err: string } => {
      const r = spawnSync('runuser', ['-u', acct.name, '--', 'sh', '-c', cmd], { encoding: 'utf8' });
      return { out: r.stdout, err: r.stderr };
    };

    it("places the account's own 0600 copy and names it in X509_USER_PROXY", async () => {
      source.creds.set('d1', x509(1));
      const env = await creds.place('job1', 'd1', ALICE, a.name);
      const path = join(dir, 'job1', 'proxy');
      assert.deepEqual(env, [{ name: 'X509_USER_PROXY', value: path }]);
      const s = statSync(path);
      assert.deepEqual([s.uid, s.gid, s.mode & 0o777], [a.uid, a.gid, 0o600]);
      assert.equal(as(a, `cat ${path}`).out, readFileSync(path, 'utf8'));
      assert.match(as(b, `cat ${path}`).err, /Permission denied/, 'another account cannot read it');
      assert.match(as(b, `ls ${dir}`).err, /Permission denied/, 'nor list the copies');
    });

    it('the account cannot remove, replace or add files next to its copy', () => {
      const d = join(dir, 'job1');
      for (const cmd of [
        `rm -f ${d}/proxy`,
        `mv ${d}/proxy ${d}/x`,
        `echo x > ${d}/.delegation`,
        `ln -s /etc/passwd ${d}/evil`,
      ]) {
        assert.match(as(a, cmd).err, /Permission denied/, cmd);
      }
      assert.ok(existsSync(join(d, 'proxy')));
    });

    it("a renewal rewrites the copy, still the account's; so it does after a restart", async () => {
      source.creds.set('d1', x509(2));
      await creds.refresh('d1');
      const path = join(dir, 'job1', 'proxy');
      assert.match(readFileSync(path, 'utf8'), new RegExp(Buffer.from('key2').toString('base64')));
      assert.equal(statSync(path).uid, a.uid);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      const again = await JobCredentials.open({ dir, source, accounts: new AccountResolver() });
      source.creds.set('d1', x509(3));
      await again.refresh('d1');
      assert.match(readFileSync(path, 'utf8'), new RegExp(Buffer.from('key3').toString('base64')));
    });

    it("a copy's temporary a kill -9 left (the account's or still root's) is removed at the next start; the copy stays", async () => {
      const d = join(dir, 'job1');
      const given = join(d, '.proxy.0123456789ab.tmp');
      const record = join(d, '..delegation.ba9876543210.tmp');
      writeFileSync(given, 'half a proxy', { mode: 0o600 });
      chownSync(given, a.uid, a.gid);
      writeFileSync(record, 'd1\n', { mode: 0o600 });
      const proxy = readFileSync(join(d, 'proxy'), 'utf8');
      await JobCredentials.open({ dir, source, accounts: new AccountResolver() });
      assert.deepEqual(readdirSync(d).sort(), ['.delegation', 'proxy']);
      assert.equal(readFileSync(join(d, 'proxy'), 'utf8'), proxy);
    });

    it('a job folder a kill -9 left without its record is not taken for a placed copy, and is placed again whole', async () => {
      const d = join(dir, 'job6');
      mkdirSync(d, { mode: 0o711 });
      writeFileSync(join(d, '.proxy.0123456789ab.tmp'), 'half', { mode: 0o600 });
      const again = await JobCredentials.open({ dir, source, accounts: new AccountResolver() });
      assert.deepEqual(readdirSync(d), [], 'its temporary is gone');
      source.creds.set('d6', x509(6));
      await again.refresh('d6');
      assert.deepEqual(readdirSync(d), [], 'no renewal reaches a job that holds no copy');
      await again.place('job6', 'd6', ALICE, a.name);
      assert.deepEqual(readdirSync(d).sort(), ['.delegation', 'proxy']);
      assert.equal(statSync(join(d, 'proxy')).uid, a.uid);
    });

    it('a copy placed by the release before owner keys (one-line DN in its file) is renewed for the key', async () => {
      source.creds.set('d1', x509(4));
      await creds.place('job7', 'd1', ALICE, a.name);
      const meta = join(dir, 'job7', '.delegation');
      writeFileSync(meta, readFileSync(meta, 'utf8').replace(`\n${ALICE}\n`, '\n/CN=alice\n'));
      const again = await JobCredentials.open({ dir, source, accounts: new AccountResolver() });
      source.creds.set('d1', x509(5));
      await again.refresh('d1');
      assert.match(
        readFileSync(join(dir, 'job7', 'proxy'), 'utf8'),
        new RegExp(Buffer.from('key5').toString('base64')),
      );
      await again.remove('job7');
    });

    it('a token goes to BEARER_TOKEN_FILE; removal takes the copy away', async () => {
      source.creds.set('t1', { kind: 'jwt', token: 'a.b.c' });
      const env = await creds.place('job2', 't1', ALICE, b.name);
      assert.deepEqual(env, [{ name: 'BEARER_TOKEN_FILE', value: join(dir, 'job2', 'token') }]);
      assert.equal(as(b, `cat ${join(dir, 'job2', 'token')}`).out, 'a.b.c');
      await creds.remove('job2');
      assert.equal(existsSync(join(dir, 'job2')), false);
    });

    it('no delegation, or one without a credential now (another owner, expired): no copy, no variable', async () => {
      assert.deepEqual(await creds.place('job3', null, ALICE, a.name), []);
      assert.deepEqual(await creds.place('job4', 'd1', 'CN=mallory', a.name), []);
      assert.equal(existsSync(join(dir, 'job4')), false);
    });

    it('an account that does not resolve: refused, nothing written (never a copy for the service user)', async () => {
      await assert.rejects(
        creds.place('job5', 'd1', ALICE, 'nosuchacct-ceres'),
        (e: unknown) => e instanceof CeError && e.code === 'CE_ERR_ACCOUNT_UNKNOWN',
      );
      assert.equal(existsSync(join(dir, 'job5', 'proxy')), false);
    });
  },
);
