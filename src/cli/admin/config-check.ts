/**
 * `ceres admin config check FILE`: everything `ceres serve` checks in the file before
 * it starts (schema, values, cross-references, authorization rules), plus that the
 * files it names exist, and that no account it lets jobs run as is root or a system
 * account (docs/security.md); starts nothing. Exit 0 when usable, 1 with the reasons otherwise.
 */
import type { Command } from 'commander';
import { accessSync, constants, statSync } from 'node:fs';
import { ConfigError, loadConfig } from '../../config/load.js';
import type { Config } from '../../config/schema.js';
import { print, printJson } from './context.js';
import { accountProblems } from '../../service/account-checks.js';

export function registerConfigCheck(admin: Command): void {
  admin
    .command('config')
    .description('configuration file tools')
    .command('check')
    .description('validate a configuration file without starting anything')
    .argument('<file>')
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      const json = cmd.optsWithGlobals<{ json?: boolean }>().json === true;
      let problems: string[];
      let config: Config | undefined;
      try {
        config = loadConfig(file);
        problems = [...missingFiles(config), ...(await accountProblems(config))];
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

/** Files and directories the configuration names that the service will need. */
function missingFiles(c: Config): string[] {
  const out: string[] = [];
  const need = (key: string, path: string | undefined, kind: 'file' | 'dir'): void => {
    if (path === undefined) return;
    try {
      const st = statSync(path);
      if (kind === 'dir' ? !st.isDirectory() : !st.isFile())
        throw new Error(`not a ${kind === 'dir' ? 'directory' : 'file'}`);
      accessSync(path, constants.R_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      out.push(
        `config key '${key}': ${path}: ${code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'not readable' : (e as Error).message}`,
      );
    }
  };
  need('tls.hostCert', c.tls.hostCert, 'file');
  need('tls.hostKey', c.tls.hostKey, 'file');
  need('tls.caDir', c.tls.caDir, 'dir');
  c.cluster.runtimeEnvironments.forEach((r, i) => need(`cluster.runtimeEnvironments.${i}.script`, r.script, 'file'));
  return out;
}
