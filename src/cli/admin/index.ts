/**
 * `ceres admin ...`: the site administrator's command, working on the state directory
 * (the database beside a running service) and, for what only the engine may do, through
 * requests the running service carries out (src/admin/admin-requests.ts).
 */
import type { Command } from 'commander';
import { registerJobCommands } from './jobs.js';
import { registerJobActions } from './job-actions.js';
import { registerDelegationCommands } from './delegations.js';
import { registerConfigCheck } from './config-check.js';
import { registerDrainCommands } from './drain.js';
import { registerStatus } from './status.js';
import { registerBackupCommands } from './backup.js';
import { registerAccountingCommands } from './accounting.js';
import { registerRouteCommand } from './route.js';
import { withStateOptions } from './context.js';

export function registerAdminCommands(program: Command): void {
  const admin = withStateOptions(
    program
      .command('admin')
      .description('administer a Ceres service: jobs of all users, delegations, drain, status, backup'),
  );
  registerStatus(admin);
  registerJobCommands(admin);
  registerJobActions(admin);
  registerDelegationCommands(admin);
  registerDrainCommands(admin);
  registerConfigCheck(admin);
  registerRouteCommand(admin);
  registerBackupCommands(admin);
  registerAccountingCommands(program);
}
