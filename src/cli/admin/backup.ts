/** `ceres admin backup FILE` / `ceres admin restore FILE` (src/admin/backup.ts). */
import type { Command } from 'commander';
import { backup, restore } from '../../admin/backup.js';
import { globals, print, printJson, stateDirOf } from './context.js';
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
    .description('unpack a backup into an empty state directory (no service may run on it)')
    .argument('<file>')
    .action((file: string, _opts: unknown, cmd: Command) => {
      const o = globals(cmd);
      const stateDir = stateDirOf(o);
      const r = restore(file, stateDir, dbFileOf(stateDir), servicePid(stateDir) !== undefined);
      if (o.json) return printJson({ stateDir, ...r });
      print(`restored into ${stateDir} (schema ${r.schemaVersion}; ${r.included.join(', ')}); start the service on it`);
    });
}
