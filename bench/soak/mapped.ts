/**
 * Two mapped users for a soak or chaos run of a service running as root: two real local
 * accounts (made with `useradd`, removed with `remove()`), two users of the service's
 * development PKI made before its first start, a grid-mapfile mapping each to its
 * account, and the configuration's authorization and `mapping` sections. The jobs then
 * run as those accounts, in session directories the service makes and gives away, as on
 * a site with a mapping (docs/security.md). The harness's folder is opened to the
 * accounts (0755) and its ledger made writable by them, so their jobs can run the soak
 * script and record their runs.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { createAccount, removeAccounts, type TestAccount } from '../../test/helpers/local-accounts.js';
import type { Ledger } from './ledger.js';
import type { UserFiles } from './users.js';

export interface MappedUsers {
  readonly files: UserFiles[];
  /** Merged into the service's configuration. */
  readonly config: Record<string, unknown>;
  readonly accounts: readonly TestAccount[];
  /** Removes the accounts (best effort). */
  remove(): void;
}

/** True when the process may make accounts and run a mapped service. */
export function canMap(): boolean {
  return process.geteuid?.() === 0;
}

/** `root`: the harness's folder (holding `ledger`); `stateDir`: the service's state directory, not started yet. */
export async function mappedUsers(root: string, stateDir: string, ledger: Ledger): Promise<MappedUsers> {
  if (!canMap()) throw new Error('two mapped users need the harness to run as root (useradd, a root service)');
  const accounts = [createAccount('soak'), createAccount('soak')];
  try {
    await chmod(root, 0o755);
    await chmod(ledger.path, 0o666);
    const pki = await initDevPki(join(stateDir, 'pki'));
    const files: UserFiles[] = [];
    const lines: string[] = [];
    for (const a of accounts) {
      const u = await addDevUser(pki.dir, a.name);
      files.push({ name: a.name, cert: u.proxyFile, key: u.proxyFile, ca: pki.files.caCert });
      lines.push(`"${u.dn}" ${a.name}\n`);
    }
    const gridMapFile = join(root, 'grid-mapfile');
    await writeFile(gridMapFile, lines.join(''));
    const config = {
      authorization: { groups: [{ name: 'mapped', match: [{ gridMapFile }] }], allow: ['mapped'] },
      mapping: [{ group: 'mapped', gridMapFile }],
    };
    return { files, config, accounts, remove: removeAccounts };
  } catch (e) {
    removeAccounts();
    throw e;
  }
}
