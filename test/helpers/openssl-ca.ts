/**
 * CAs, certificates and CRLs made by the `openssl` command, laid out in a CA directory
 * as IGTF ships it: `<hash>.0` (OpenSSL subject hash), `<hash>.signing_policy`,
 * `<hash>.namespaces`, and fetch-crl's `<hash>.r0`. For tests of the service against a
 * site's CA directory rather than its own development PKI.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OpensslCred {
  readonly dn: string;
  /** Files: certificate and key (PEM). */
  readonly cert: string;
  readonly key: string;
  readonly pem: string;
  readonly keyPem: string;
}

export interface OpensslCa extends OpensslCred {
  /** The CA's own work folder (serials, index of issued and revoked certificates). */
  readonly dir: string;
  /** OpenSSL subject hash: the CA's file names in a CA directory. */
  readonly hash: string;
}

const openssl = (args: readonly string[], cwd?: string): string =>
  execFileSync('openssl', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...(cwd ? { cwd } : {}) });

function cred(dn: string, cert: string, key: string): OpensslCred {
  return { dn, cert, key, pem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

/** A self-signed root CA (EC P-256: quick on a small machine). */
export function opensslCa(work: string, name: string, dn: string): OpensslCa {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const key = join(dir, 'ca.key');
  const cert = join(dir, 'ca.pem');
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  openssl([
    'req',
    '-x509',
    '-new',
    '-key',
    key,
    '-out',
    cert,
    '-days',
    '3650',
    '-subj',
    dn,
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  writeFileSync(join(dir, 'index.txt'), '');
  writeFileSync(join(dir, 'crlnumber'), '01\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = d',
      '[d]',
      `database = ${join(dir, 'index.txt')}`,
      `crlnumber = ${join(dir, 'crlnumber')}`,
      'default_md = sha256',
      'default_crl_days = 2',
      '',
    ].join('\n'),
  );
  const hash = openssl(['x509', '-in', cert, '-noout', '-subject_hash']).trim();
  return { ...cred(dn, cert, key), dir, hash };
}

let serial = 0x1000 + Math.floor(Math.random() * 0xffff);

/** A user (or, with `hosts`, a host) certificate issued by `ca`; its key in its own file. */
export function opensslCert(
  ca: OpensslCa,
  name: string,
  dn: string,
  o: { hosts?: readonly string[] } = {},
): OpensslCred {
  const key = join(ca.dir, `${name}.key`);
  const csr = join(ca.dir, `${name}.csr`);
  const cert = join(ca.dir, `${name}.pem`);
  const ext = join(ca.dir, `${name}.ext`);
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  openssl(['req', '-new', '-key', key, '-out', csr, '-subj', dn]);
  writeFileSync(
    ext,
    [
      'basicConstraints=critical,CA:false',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      `extendedKeyUsage=${o.hosts ? 'serverAuth,clientAuth' : 'clientAuth'}`,
      ...(o.hosts
        ? [`subjectAltName=${o.hosts.map((h) => (/^[\d.]+$/.test(h) ? `IP:${h}` : `DNS:${h}`)).join(',')}`]
        : []),
      '',
    ].join('\n'),
  );
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-set_serial',
    String(serial++),
    '-days',
    '30',
    '-out',
    cert,
    '-extfile',
    ext,
  ]);
  return cred(dn, cert, key);
}

/** The signing policy and namespaces files IGTF ships beside each CA (not enforced by Ceres). */
function companions(ca: OpensslCa): Record<string, string> {
  const ns = ca.dn.split('/').slice(0, -1).join('/');
  return {
    [`${ca.hash}.signing_policy`]: `access_id_CA X509 '${ca.dn}'\npos_rights globus CA:sign\ncond_subjects globus '"${ns}/*"'\n`,
    [`${ca.hash}.namespaces`]: `TO Issuer "${ca.dn}" PERMIT Subject "${ns}/.*"\n`,
  };
}

/** Put `ca` into `caDir` as a package update does: each file written aside, then renamed into place. */
export function installCa(caDir: string, ca: OpensslCa): void {
  for (const [name, text] of Object.entries({ [`${ca.hash}.0`]: ca.pem, ...companions(ca) })) {
    const tmp = join(caDir, `.${name}.tmp`);
    writeFileSync(tmp, text);
    renameSync(tmp, join(caDir, name));
  }
}

/** Take `ca` out of `caDir` (certificate, companions and CRL). */
export function removeCa(caDir: string, ca: OpensslCa): void {
  for (const name of [`${ca.hash}.0`, `${ca.hash}.r0`, ...Object.keys(companions(ca))])
    rmSync(join(caDir, name), { force: true });
}

/** OpenSSL's time form for -crl_lastupdate/-crl_nextupdate. */
function asn1Time(d: Date): string {
  return `${d.toISOString().replace(/[-:T]/g, '').slice(0, 14)}Z`;
}

/**
 * A CRL of `ca` (`openssl ca -gencrl`), written into `caDir` as fetch-crl does (aside,
 * then renamed to `<hash>.r0`). `nextUpdate` in the past makes an expired CRL.
 */
export function installCrl(caDir: string, ca: OpensslCa, o: { lastUpdate?: Date; nextUpdate?: Date } = {}): void {
  const out = join(ca.dir, 'crl.pem');
  openssl([
    'ca',
    '-gencrl',
    '-batch',
    '-config',
    join(ca.dir, 'ca.cnf'),
    '-keyfile',
    ca.key,
    '-cert',
    ca.cert,
    '-out',
    out,
    ...(o.lastUpdate ? ['-crl_lastupdate', asn1Time(o.lastUpdate)] : []),
    ...(o.nextUpdate ? ['-crl_nextupdate', asn1Time(o.nextUpdate)] : []),
  ]);
  const tmp = join(caDir, `.${ca.hash}.r0.tmp`);
  writeFileSync(tmp, readFileSync(out));
  renameSync(tmp, join(caDir, `${ca.hash}.r0`));
}
