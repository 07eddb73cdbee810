/** `ceres admin backup FILE` / `ceres admin restore FILE` (src/admin/backup.ts). */
import type { Command } from 'commander';
import { backup, restore } from '../../admin/backup.js';
import type { OwnerRules } from '../../admin/restore-owners.js';
import { lookUpAccount } from '../../accounts/resolve-account.js';
import { loadConfig } from '../../config/load.js';
import { mappedAccountNames } from '../../service/account-checks.js';
import { globals, print, printJson, stateDirOf, type GlobalOptions } from './context.js';
import { dbFileOf, servicePid } from './service-state.js';

export function registerBackupCommands(admin: Command): void {
  admin
    .command('backup')
    .description(
      'write a consistent backup of the state directory (database + files kept with it) to FILE (.tar.gz); safe while the service runs',
    )
    .argument('<file>')
    .option('--with-sessions', 'include the session directories (job data)')
    .action(async (file: string, opts: { withSessions?: boolean }, cmd: Command) => {
      const o = globals(cmd);
      const stateDir = stateDirOf(o);
      const r = await backup(stateDir, dbFileOf(stateDir), file, { withSessions: opts.withSessions === true });
      if (o.json) return printJson(r);
      print(`backup written to ${r.file} (schema ${r.schemaVersion}; ${r.included.join(', ')})`);
    });
  admin
    .command('restore')
    .description(
      'unpack a backup into an empty state directory (no service may run on it); as root with owners and modes, each job checked against its account',
    )
    .argument('<file>')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const o = globals(cmd);
      const stateDir = stateDirOf(o);
      const r = await restore(file, stateDir, dbFileOf(stateDir), {
        serviceRunning: servicePid(stateDir) !== undefined,
        ownerRules: await ownerRulesOf(o),
      });
      if (o.json) return printJson({ stateDir, ...r });
      print(`restored into ${stateDir} (schema ${r.schemaVersion}; ${r.included.join(', ')})`);
      if (r.ownersKept) print('owners and modes kept');
      else if (r.notKept.length > 0) print(`not kept:\n${r.notKept.map((l) => `  ${l}`).join('\n')}`);
      else print("not root: every member was already this user's, nothing of the owners was lost");
      if (r.setIdCleared > 0) print(`set-user-ID/set-group-ID bits cleared on ${r.setIdCleared} files`);
      if (r.ownersKept && o.config === undefined)
        print("no --config: the jobs' accounts were checked, not whether the configuration still maps jobs to them");
      for (const h of r.held)
        print(`job ${h.id} held (its folders closed${h.killed ? ', killed at the start' : ''}): ${h.reason}`);
      print('start the service on it');
    });
}

/** The accounts jobs may run as, from the configuration (with `--config`, also whether the mapping still names them). */
async function ownerRulesOf(o: GlobalOptions): Promise<(serviceUid: number) => OwnerRules> {
  const cfg = loadConfig(o.config, { stateDir: o.stateDir });
  const policy = { minUid: cfg.accounts.minUid, exempt: cfg.accounts.default };
  const mapped =
    o.config === undefined ? undefined : new Set([...(await mappedAccountNames(cfg.mapping)), cfg.accounts.default]);
  return (serviceUid) => ({
    serviceUid,
    defaultAccount: cfg.mapping.length === 0 ? cfg.accounts.default : undefined,
    mapped,
    uidOf: async (account) => (await lookUpAccount(account, policy)).uid,
  });
}
