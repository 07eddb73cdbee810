#!/usr/bin/env -S node --no-memory-reducer --heap-growing-percent=50 --expose-gc
/**
 * The `ceres` command. Subcommands register themselves; this file only parses and
 * dispatches, and is the one place (with serve-command.ts) that may end the process.
 *
 * Only the modules of the command asked for are loaded: each command group pulls in
 * hundreds of modules (the service, the X.509 library), and an administrator's
 * `ceres admin status` should not wait for the service's. Help, an unknown command and
 * no command at all load every group, so the help lists them all; `--version` loads none.
 */
import { Command } from 'commander';
import { CERES_VERSION } from '../config/version.js';

type Register = (program: Command) => void;

/** The top-level commands, and the module that registers each. */
const GROUPS: Readonly<Record<string, () => Promise<Register>>> = {
  serve: async () => (await import('./serve-command.js')).registerServeCommand,
  pki: async () => (await import('./pki-command.js')).registerPkiCommands,
  admin: async () => (await import('./admin/index.js')).registerAdminCommands,
  // Registered by the admin group (it shares the state-directory options).
  accounting: async () => (await import('./admin/index.js')).registerAdminCommands,
  token: async () => (await import('./token-command.js')).registerTokenCommands,
  info: async () => (await import('./info-command.js')).registerInfoCommands,
  trace: async () => (await import('./trace-command.js')).registerTraceCommand,
};

const VERSION_FLAGS = new Set(['-V', '--version']);

async function main(argv: readonly string[]): Promise<void> {
  const program = new Command();
  program
    .name('ceres')
    .description('Ceres computing element: the ARC REST job management interface (1.0, 1.1)')
    .version(CERES_VERSION, '-V, --version', 'print the version of Ceres and exit')
    .showHelpAfterError();
  const asked = argv[2];
  const load = asked === undefined ? undefined : GROUPS[asked];
  // The version alone needs no command group.
  const registers = VERSION_FLAGS.has(asked ?? '')
    ? []
    : load !== undefined
      ? [await load()]
      : await Promise.all(Object.values(GROUPS).map((g) => g()));
  for (const register of new Set(registers)) register(program);
  await program.parseAsync(argv);
}

main(process.argv).catch((e: unknown) => {
  process.stderr.write(`ceres: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
