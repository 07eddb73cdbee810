/**
 * `ceres pki init --dir DIR` and `ceres pki user NAME --dir DIR`: the embedded
 * development PKI (see src/pki/dev-pki.ts). Failures are thrown; main.ts reports
 * them and sets the exit code.
 */
import type { Command } from 'commander';
import { isAbsolute, relative } from 'node:path';
import { addDevUser, initDevPki } from '../pki/dev-pki.js';

/** `write` receives the report text (standard output by default). */
export function registerPkiCommands(
  program: Command,
  write: (text: string) => void = (t) => void process.stdout.write(t),
): void {
  const pki = program
    .command('pki')
    .description('Development PKI: a test CA, host and user certificates, RFC 3820 proxies');

  pki
    .command('init')
    .description('Create a development CA, a host certificate for localhost and a user certificate with a proxy')
    .requiredOption('--dir <dir>', 'directory to create (must not exist or be empty)')
    .option('--hostname <name>', 'extra DNS name or IP address for the host certificate')
    .option('--force', 'replace an existing PKI in the directory', false)
    .action(async (o: { dir: string; hostname?: string; force: boolean }) => {
      const r = await initDevPki(o.dir, {
        ...(o.hostname === undefined ? {} : { hostname: o.hostname }),
        force: o.force,
      });
      const out = [
        `Development PKI written to ${r.dir}`,
        `  CA    ${r.caDn}`,
        `  host  ${r.hostDn}`,
        `  user  ${r.userDn}`,
        ...r.written.map((f) => `  wrote ${show(f)}`),
        `Use it with: curl --cacert ${r.files.caCert} --cert ${r.files.userProxy} --key ${r.files.userProxy} ...`,
        `         or: X509_CERT_DIR=${r.files.certificatesDir} X509_USER_PROXY=${r.files.userProxy} arcinfo ...`,
        'This CA is for development only: anyone holding cakey.pem can make identities it vouches for.',
      ];
      write(`${out.join('\n')}\n`);
    });

  pki
    .command('user')
    .description(
      'Add a user certificate, key and proxy (NAME-cert.pem, NAME-key.pem, NAME-proxy.pem) to a development PKI',
    )
    .argument('<name>', 'user name: becomes the CN and the file name prefix')
    .requiredOption('--dir <dir>', 'directory of a PKI made by `ceres pki init`')
    .option('--force', 'replace existing files of that user', false)
    .action(async (name: string, o: { dir: string; force: boolean }) => {
      const r = await addDevUser(o.dir, name, { force: o.force });
      const out = [`User ${r.dn}`, ...r.written.map((f) => `  wrote ${show(f)}`)];
      write(`${out.join('\n')}\n`);
    });
}

/** Paths under the working directory relative to it, others absolute. */
function show(path: string): string {
  const r = relative(process.cwd(), path);
  return r === '' || r.startsWith('..') || isAbsolute(r) ? path : r;
}
