/**
 * `ceres admin route --subject DN [--fqan F]... [--token-groups G] --description FILE`:
 * the dry run of routing (src/admin/route-dry-run.ts). Prints the route the job would
 * take, the account it would run as and, for every route before it, why it did not
 * match. Exit 0 when a submission would be taken; 1 with the step and reason otherwise
 * (an unreadable file, a description refused, no route, a caller not authorized).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, loadConfig } from '../../config/load.js';
import { dryRunRoute } from '../../admin/route-dry-run.js';
import { globals, print, printJson } from './context.js';

interface RouteOptions {
  subject: string;
  issuer?: string;
  fqan: string[];
  tokenGroups?: string;
  tokenScopes?: string;
  description: string;
}

const list = (v: string | undefined): string[] | undefined =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

function fail(message: string): void {
  process.stderr.write(`ceres admin route: ${message}\n`);
  process.exitCode = 1;
}

export function registerRouteCommand(admin: Command): void {
  admin
    .command('route')
    .description('dry run: the route, queue and account a job description from this caller would get')
    .requiredOption('--subject <dn>', "the caller's certificate subject DN (or token subject, with --token-groups)")
    .option('--issuer <dn>', "the certificate's issuer DN, or the token's issuer")
    .option('--fqan <fqan>', 'a VOMS FQAN of the caller (repeatable)', (v: string, all: string[]) => [...all, v], [])
    .option('--token-groups <groups>', 'the caller is a bearer token with these groups (comma-separated)')
    .option('--token-scopes <scopes>', "the token's scopes (comma-separated)")
    .requiredOption('--description <file>', 'the job description (xRSL or ADL)')
    .action((o: RouteOptions, cmd: Command) => {
      const g = globals(cmd);
      if (g.config === undefined) return fail('--config FILE is needed: the routes are in the configuration');
      let body: Buffer;
      try {
        body = readFileSync(o.description);
      } catch (e) {
        return fail(`cannot read the description ${o.description}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
      }
      let config;
      try {
        config = loadConfig(g.config);
      } catch (e) {
        if (e instanceof ConfigError) return fail(e.message);
        throw e;
      }
      const r = dryRunRoute(
        config,
        {
          subject: o.subject,
          issuer: o.issuer,
          fqans: o.fqan,
          tokenGroups: list(o.tokenGroups),
          tokenScopes: list(o.tokenScopes),
        },
        body,
      );
      if (!r.ok) process.exitCode = 1;
      if (g.json === true) return printJson(r);
      for (const m of r.misses ?? []) print(`route ${m.name}: not taken: ${m.why}`);
      if (!r.ok) return fail(`${r.step}: ${r.reason}`);
      const where = r.route
        ? [
            `route ${r.route.name}`,
            `partition ${r.route.partition ?? r.queue}`,
            ...(r.route.account !== undefined ? [`account ${r.route.account}`] : []),
            ...(r.route.qos !== undefined ? [`QoS ${r.route.qos}`] : []),
            ...(r.route.extraArgs !== undefined ? [`options ${r.route.extraArgs.join(' ')}`] : []),
          ].join(', ')
        : 'no routes configured';
      print(`taken: ${where}`);
      print(`queue: ${r.queue}`);
      print(`groups: ${r.groups.length > 0 ? r.groups.join(', ') : '(none)'}`);
      print(
        `runs as: ${r.localAccount}${r.accountFrom === 'default' ? ' (accounts.default: no mapping applies; a service not running as root runs it as itself)' : ''}`,
      );
    });
}
