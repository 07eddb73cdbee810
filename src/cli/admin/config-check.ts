/**
 * `ceres admin config check FILE`: everything `ceres serve` checks before it starts,
 * starting nothing: the file's schema, values, cross-references and authorization rules
 * (src/config/load.ts), then every check of the configuration against this host, the
 * list the start runs too (src/service/config-checks.ts: accounts, files, the batch
 * system's commands and configuration, the sessions folder's reach). Every problem is
 * printed, not just the first. Exit 0 when usable, 1 with the reasons otherwise
 * (warnings included: each fails jobs later).
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { print, printJson } from './context.js';
import { AccountResolver } from '../../accounts/resolve-account.js';
import { runConfigChecks } from '../../service/config-checks.js';
import { describeProblem } from '../../service/host-problem.js';

export function registerConfigCheck(admin: Command): void {
  admin
    .command('config')
    .description('configuration file tools')
    .command('check')
    .description('validate a configuration file against this host without starting anything')
    .argument('<file>')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const json = cmd.optsWithGlobals<{ json?: boolean }>().json === true;
      let problems: string[];
      let config: Config | undefined;
      try {
        config = loadConfig(file);
        const resolver = new AccountResolver(0, { minUid: config.accounts.minUid, exempt: config.accounts.default });
        // The service's user is unknown here: assume root, as a mapping requires.
        problems = (await runConfigChecks(config, { root: true, resolver, env: process.env })).map(describeProblem);
      } catch (e) {
        if (!(e instanceof ConfigError)) throw e;
        problems = [e.message];
      }
      if (problems.length) process.exitCode = 1;
      if (json) return printJson({ file, ok: problems.length === 0, problems });
      if (problems.length === 0) {
        print(
          `${file}: OK (listen ${config!.listen}, state directory ${config!.stateDir}, ${config!.cluster.queues.length} queue(s))`,
        );
        return;
      }
      for (const p of problems) process.stderr.write(`${file}: ${p}\n`);
    });
}
