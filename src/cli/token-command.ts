/**
 * `ceres token issue`: a bearer token (WLCG profile) from the development issuer of a
 * development PKI, printed alone on standard output so that
 * `curl -H "Authorization: Bearer $(ceres token issue --sub alice --scope compute.read)"`
 * works. The service trusts this issuer when it runs on that development PKI.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { issueDevToken } from '../auth/token/dev-issuer.js';

export function registerTokenCommands(
  program: Command,
  write: (text: string) => void = (t) => void process.stdout.write(t),
): void {
  const token = program.command('token').description('Development bearer tokens (WLCG JWT profile)');
  token
    .command('issue')
    .description('Print a token signed by the development token issuer of a development PKI')
    .requiredOption('--sub <subject>', 'token subject (sub): with the issuer, the owner of jobs and delegations')
    .option(
      '--scope <scopes>',
      'space-separated scopes, e.g. "compute.create compute.read compute.modify compute.cancel"',
    )
    .option('--aud <url>', 'audience (default https://wlcg.cern.ch/jwt/v1/any, which every service accepts)')
    .option('--lifetime <seconds>', 'lifetime in seconds', positiveInt, 3600)
    .option('--groups <groups>', 'comma-separated groups (wlcg.groups), e.g. /vo,/vo/production')
    .option('--dir <dir>', 'the development PKI folder (the service prints it on start)', 'var/pki')
    .action(
      async (o: { sub: string; scope?: string; aud?: string; lifetime: number; groups?: string; dir: string }) => {
        const groups = o.groups
          ?.split(',')
          .map((g) => g.trim())
          .filter((g) => g !== '');
        const jwt = await issueDevToken(o.dir, {
          sub: o.sub,
          scope: o.scope,
          aud: o.aud,
          lifetimeSeconds: o.lifetime,
          groups,
        });
        write(`${jwt}\n`);
      },
    );
}

function positiveInt(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('a positive whole number of seconds');
  return n;
}
