// Start-up checks for jobs under local accounts: a mapping without root is refused; the
// sessions folder must be reachable by every mapped account (real accounts, real
// directories), and the accounts that cannot reach it are named.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  canPass,
  checkAccountsAtStart,
  checkSessionRoot,
  describeJobAccounts,
  mappedAccountNames,
  refuseMappingWithoutRoot,
  unreachableBy,
} from '../../src/service/account-checks.js';
import { StartError } from '../../src/process/start-error.js';
import { AccountResolver, lookUpAccount } from '../../src/accounts/resolve-account.js';
import {
  assertRoot,
  createAccount,
  createGroup,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

/** The arguments of checkAccountsAtStart for a root service with sessions in `dir`. */
function atStart(dir: string, o: { minUid?: number; defaultAccount?: string } = {}) {
  return {
    mapping: [],
    sessionsDir: dir,
    sessionsDefault: false,
    stateDir: dir,
    defaultAccount: o.defaultAccount ?? 'nobody',
    shared: [],
    resolver: new AccountResolver(60_000, { minUid: o.minUid ?? 1000, exempt: o.defaultAccount ?? 'nobody' }),
    warn: () => undefined,
    euid: 0,
  };
}

describe('refusing a mapping the service cannot honour', () => {
  const mapping = [
    { group: 'atlas', pool: { accounts: ['atlas001', 'atlas002'] } },
    { group: 'x', account: 'atlas001' },
  ];

  it('refuses a mapping when the service is not root, saying why and what to do', () => {
    assert.throws(
      () => refuseMappingWithoutRoot(mapping, 1000),
      (e: unknown) =>
        e instanceof StartError &&
        /runs as uid 1000, not root/.test(e.message) &&
        /remove the mapping section/.test(e.message),
    );
  });

  it('accepts a mapping as root, and no mapping as anyone', () => {
    refuseMappingWithoutRoot(mapping, 0);
    refuseMappingWithoutRoot([], 1000);
  });

  it('lists the accounts a mapping names, once each, grid-mapfile accounts included', async () => {
    assert.deepEqual(await mappedAccountNames(mapping), ['atlas001', 'atlas002']);
    const dir = await mkdtemp(join(tmpdir(), 'ceres-gridmap-'));
    try {
      const file = join(dir, 'grid-mapfile');
      await writeFile(file, '"/O=Site/CN=Jane" jane,other\n"/O=Site/CN=Joe" atlas001\n"/O=Site/CN=Unclosed x\n');
      assert.deepEqual(
        await mappedAccountNames([...mapping, { gridMapFile: file }, { gridMapFile: join(dir, 'missing') }]),
        ['atlas001', 'atlas002', 'jane'],
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('decides passage by owner, then group, then other bits', () => {
    const a = { uid: 5, groups: [7] };
    assert.equal(canPass({ uid: 5, gid: 0, mode: 0o700 }, a), true);
    assert.equal(canPass({ uid: 5, gid: 7, mode: 0o071 }, a), false, 'the owner bits decide for the owner');
    assert.equal(canPass({ uid: 0, gid: 7, mode: 0o710 }, a), true);
    assert.equal(canPass({ uid: 0, gid: 7, mode: 0o701 }, a), false, 'the group bits decide for a member');
    assert.equal(canPass({ uid: 0, gid: 0, mode: 0o711 }, a), true);
    assert.equal(canPass({ uid: 0, gid: 0, mode: 0o770 }, a), false);
  });
});

describe(
  'the sessions folder and mapped accounts',
  { skip: skipUnlessRoot('checking the sessions folder against local accounts') },
  () => {
    let a: TestAccount;
    let b: TestAccount;
    let g: { name: string; gid: number };
    let root = '';
    before(async () => {
      assertRoot();
      a = createAccount();
      b = createAccount();
      g = createGroup([a.name]);
      root = await mkdtemp(join(tmpdir(), 'ceres-sroot-'));
      await chmod(root, 0o711);
    });
    after(async () => {
      removeAccounts();
      if (root) await rm(root, { recursive: true, force: true });
    });

    it('names the accounts that cannot pass a directory on the way, and where they stop', async () => {
      const gate = join(root, 'gate');
      await mkdir(join(gate, 'sessions'), { recursive: true });
      await chmod(gate, 0o710);
      await chown(gate, 0, g.gid); // a's group may pass, b may not
      const accounts = [await lookUpAccount(a.name), await lookUpAccount(b.name)];
      assert.deepEqual(await unreachableBy(join(gate, 'sessions'), accounts), [{ account: b.name, dir: gate }]);
      await assert.rejects(
        checkSessionRoot({ dir: join(gate, 'sessions'), accounts }),
        (e: unknown) =>
          e instanceof StartError &&
          e.message.includes(`${b.name} (stopped at ${gate})`) &&
          !e.message.includes(`${a.name} (`),
      );
    });

    it('passes a folder every mapped account reaches, making it 0711 when missing', async () => {
      const dir = join(root, 'open', 'sessions');
      await mkdir(join(root, 'open'), { mode: 0o711 });
      await checkSessionRoot({ dir, accounts: [await lookUpAccount(a.name), await lookUpAccount(b.name)] });
    });

    it('warns about a mapped account that does not resolve, without refusing to start', async () => {
      const warned: unknown[] = [];
      await checkAccountsAtStart({
        ...atStart(join(root, 'open2')),
        mapping: [{ pool: { accounts: ['nosuchacct-ceres', a.name] } }],
        warn: (_m, o) => warned.push(o),
      });
      assert.equal(warned.length, 1);
      assert.match(JSON.stringify(warned[0]), /nosuchacct-ceres/);
    });

    it('refuses a sessions folder that is a file', async () => {
      await writeFile(join(root, 'afile'), '');
      await assert.rejects(checkSessionRoot({ dir: join(root, 'afile'), accounts: [] }), StartError);
    });
  },
);

describe(
  'who jobs run as: never root, never a system account',
  { skip: skipUnlessRoot('resolving the accounts jobs run as') },
  () => {
    let a: TestAccount;
    let dir = '';
    before(async () => {
      assertRoot();
      a = createAccount();
      dir = await mkdtemp(join(tmpdir(), 'ceres-jobacct-'));
      await chmod(dir, 0o711);
    });
    after(async () => {
      removeAccounts();
      await rm(dir, { recursive: true, force: true });
    });

    it('runs every job of a root service without a mapping as the default account, and says so', async () => {
      const r = await checkAccountsAtStart(atStart(join(dir, 's1')));
      assert.equal(r.jobAccounts.kind, 'default');
      assert.equal(r.jobAccounts.kind === 'default' && r.jobAccounts.account.name, 'nobody');
      assert.notEqual(r.jobAccounts.kind === 'default' && r.jobAccounts.account.uid, 0);
      assert.match(describeJobAccounts(r.jobAccounts), /^local account nobody \(uid \d+; accounts\.default/);
    });

    it('names another default account when configured (exempt from the minimum uid)', async () => {
      const r = await checkAccountsAtStart(atStart(join(dir, 's2'), { defaultAccount: 'daemon' }));
      assert.equal(r.jobAccounts.kind === 'default' && r.jobAccounts.account.name, 'daemon');
    });

    it('refuses to start when the default account is root, saying why', async () => {
      await assert.rejects(
        checkAccountsAtStart(atStart(join(dir, 's3'), { defaultAccount: 'root' })),
        (e: unknown) => e instanceof StartError && /accounts\.default/.test(e.message) && /uid 0/.test(e.message),
      );
    });

    it('refuses to start when the default account does not exist', async () => {
      await assert.rejects(
        checkAccountsAtStart(atStart(join(dir, 's4'), { defaultAccount: 'nosuchacct-ceres' })),
        (e: unknown) =>
          e instanceof StartError && /does not exist/.test(e.message) && /accounts\.default/.test(e.message),
      );
    });

    for (const [what, account] of [
      ['root', 'root'],
      ['a system account below accounts.minUid', 'daemon'],
    ] as const)
      it(`refuses to start with a mapping to ${what}`, async () => {
        await assert.rejects(
          checkAccountsAtStart({ ...atStart(join(dir, `m-${account}`)), mapping: [{ account }] }),
          (e: unknown) =>
            e instanceof StartError &&
            e.message.includes(`local account ${account} has uid`) &&
            /no job may run as/.test(e.message),
        );
      });

    it('accepts a mapped account at or above the minimum uid, and one below a lower minimum', async () => {
      const r = await checkAccountsAtStart({ ...atStart(join(dir, 'm-ok')), mapping: [{ account: a.name }] });
      assert.deepEqual(r.jobAccounts, { kind: 'mapped', entries: 1 });
      await checkAccountsAtStart({ ...atStart(join(dir, 'm-low'), { minUid: 1 }), mapping: [{ account: 'daemon' }] });
      await assert.rejects(
        checkAccountsAtStart({
          ...atStart(join(dir, 'm-high'), { minUid: a.uid + 1 }),
          mapping: [{ account: a.name }],
        }),
        StartError,
      );
    });

    it('runs jobs as itself when not root, whatever accounts.default says', async () => {
      const r = await checkAccountsAtStart({ ...atStart(join(dir, 's5'), { defaultAccount: 'root' }), euid: 1234 });
      assert.deepEqual(r.jobAccounts, { kind: 'self', uid: 1234 });
      assert.equal(describeJobAccounts(r.jobAccounts), "the service's own account (uid 1234)");
    });

    it('keeps sessions in a folder of its own when the default account cannot reach the state directory', async () => {
      const closed = join(dir, 'closed');
      await mkdir(join(closed, 'state', 'sessions'), { recursive: true });
      await chmod(closed, 0o700); // like /root
      const state = join(closed, 'state');
      const o = { ...atStart(join(state, 'sessions')), stateDir: state, sessionsDefault: true };
      const r = await checkAccountsAtStart(o);
      assert.match(r.sessionsDir, /^\/var\/tmp\/ceres-sessions-[0-9a-f]{16}$/);
      try {
        const st = await lstat(r.sessionsDir);
        assert.equal(st.uid, 0);
        assert.equal(st.mode & 0o777, 0o711);
        assert.equal((await checkAccountsAtStart(o)).sessionsDir, r.sessionsDir, 'the same folder at every start');
        // A configured sessions folder is never moved: it is refused with the reason instead.
        await assert.rejects(
          checkAccountsAtStart({ ...o, sessionsDefault: false }),
          /cannot reach the sessions folder/,
        );
      } finally {
        await rm(r.sessionsDir, { recursive: true, force: true });
      }
    });

    it('refuses a sessions folder under /var/tmp that another user made first, or a link', async () => {
      const closed = join(dir, 'closed2');
      await mkdir(join(closed, 'state', 'sessions'), { recursive: true });
      await chmod(closed, 0o700);
      const state = join(closed, 'state');
      const o = { ...atStart(join(state, 'sessions')), stateDir: state, sessionsDefault: true };
      const planted = (await checkAccountsAtStart(o)).sessionsDir;
      try {
        await chown(planted, a.uid, a.gid); // as if the account had made it before the service
        await assert.rejects(
          checkAccountsAtStart(o),
          (e: unknown) => e instanceof StartError && /made by uid/.test(e.message),
        );
        await rm(planted, { recursive: true });
        await symlink(dir, planted);
        await assert.rejects(
          checkAccountsAtStart(o),
          (e: unknown) => e instanceof StartError && /a link/.test(e.message),
        );
      } finally {
        await rm(planted, { recursive: true, force: true });
      }
    });
  },
);
