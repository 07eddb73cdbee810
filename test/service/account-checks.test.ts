// Start-up checks for jobs under local accounts: a mapping without root is refused; the
// sessions folder must be reachable by every mapped account (real accounts, real
// directories), and the accounts that cannot reach it are named.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  canPass,
  checkSessionRoot,
  mappedAccountNames,
  refuseMappingWithoutRoot,
  unreachableBy,
} from '../../src/service/account-checks.js';
import { StartError } from '../../src/service/start-error.js';
import { AccountResolver, lookUpAccount } from '../../src/accounts/resolve-account.js';
import {
  assertRoot,
  createAccount,
  createGroup,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

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
        checkSessionRoot({
          dir: join(gate, 'sessions'),
          accounts: [a.name, b.name],
          resolver: new AccountResolver(),
          warn: () => undefined,
        }),
        (e: unknown) =>
          e instanceof StartError &&
          e.message.includes(`${b.name} (stopped at ${gate})`) &&
          !e.message.includes(`${a.name} (`),
      );
    });

    it('passes a folder every mapped account reaches, making it 0711 when missing', async () => {
      const dir = join(root, 'open', 'sessions');
      await mkdir(join(root, 'open'), { mode: 0o711 });
      await checkSessionRoot({
        dir,
        accounts: [a.name, b.name],
        resolver: new AccountResolver(),
        warn: () => undefined,
      });
    });

    it('warns about a mapped account that does not resolve, without refusing to start', async () => {
      const warned: unknown[] = [];
      await checkSessionRoot({
        dir: join(root, 'open2'),
        accounts: ['nosuchacct-ceres', a.name],
        resolver: new AccountResolver(),
        warn: (_m, o) => warned.push(o),
      });
      assert.equal(warned.length, 1);
      assert.match(JSON.stringify(warned[0]), /nosuchacct-ceres/);
    });

    it('refuses a sessions folder that is a file', async () => {
      await writeFile(join(root, 'afile'), '');
      await assert.rejects(
        checkSessionRoot({
          dir: join(root, 'afile'),
          accounts: [],
          resolver: new AccountResolver(),
          warn: () => undefined,
        }),
        StartError,
      );
    });
  },
);
