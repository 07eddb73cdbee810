/**
 * What every `ceres admin` subcommand shares: which state directory it works on
 * (`--state-dir`, else the `stateDir` of `--config`, else the service's default), the
 * database opened there, and `--json` output.
 */
import type { Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import type { Db } from '../../store/database.js';
import { DatabaseAccessError, openStateDb } from '../../admin/state-db.js';
import { accountNameOf } from '../../accounts/resolve-account.js';
import { dbFileOf } from './service-state.js';

export interface GlobalOptions {
  stateDir?: string;
  config?: string;
  json?: boolean;
}

/** The options that say where the state is and how to print, on `admin` and `accounting`. */
export function withStateOptions(cmd: Command): Command {
  return cmd
    .option('--state-dir <dir>', 'state directory (default: from --config, else ./var)')
    .option('--config <file>', 'configuration file (JSON) of the service')
    .option('--json', 'machine-readable output');
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

export function configOf(o: GlobalOptions): Config | undefined {
  return o.config !== undefined ? loadConfig(o.config) : undefined;
}

export function stateDirOf(o: GlobalOptions): string {
  return loadConfig(o.config, { stateDir: o.stateDir }).stateDir;
}

/** Run `fn` with the state directory's database, closed afterwards. */
export async function withDb<T>(o: GlobalOptions, fn: (db: Db, stateDir: string) => T | Promise<T>): Promise<T> {
  const stateDir = stateDirOf(o);
  let db: Db;
  try {
    db = openStateDb(stateDir, dbFileOf(stateDir));
  } catch (e) {
    if (!(e instanceof DatabaseAccessError)) throw e;
    // Say whom to run as: the service's user, who owns its database.
    const owner = e.ownerUid === undefined ? undefined : ((await accountNameOf(e.ownerUid)) ?? `uid ${e.ownerUid}`);
    throw new DatabaseAccessError(
      e.file,
      `${e.why}: run the command as ${owner ?? 'the user the service runs as'}${owner === 'root' ? '' : ' (the user the service runs as) or as root'}, e.g. ${owner !== undefined && owner !== 'root' && !owner.startsWith('uid ') ? `runuser -u ${owner} -- ` : 'sudo '}ceres admin ...`,
      e.ownerUid,
    );
  }
  try {
    return await fn(db, stateDir);
  } finally {
    db.close();
  }
}

export function print(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

export function printJson(value: unknown): void {
  print(JSON.stringify(value, null, 2));
}
