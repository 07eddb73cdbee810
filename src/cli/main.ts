#!/usr/bin/env -S node --no-memory-reducer --heap-growing-percent=50 --expose-gc
/**
 * The `ceres` command. Subcommands register themselves; this file only parses and
 * dispatches, and is the one place (with serve-command.ts) that may end the process.
 */
import { Command } from 'commander';
import { registerServeCommand } from './serve-command.js';
import { registerPkiCommands } from './pki-command.js';
import { registerAdminCommands } from './admin/index.js';
import { registerTokenCommands } from './token-command.js';

const program = new Command();
program
  .name('ceres')
  .description('Ceres computing element: the ARC REST job management interface (1.0, 1.1)')
  .showHelpAfterError();
registerServeCommand(program);
registerPkiCommands(program);
registerAdminCommands(program);
registerTokenCommands(program);
program.parseAsync(process.argv).catch((e: unknown) => {
  process.stderr.write(`ceres: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
