/**
 * A private OpenLDAP slapd with Debian's GLUE 2.0 schema (glue-schema) on loopback, as a
 * resource BDII runs it: one mdb database `o=glue` (rootdn `o=glue`), started in the
 * foreground in a scratch folder and stopped by its pid. Also the real `bdii-update`
 * loop in front of it, with the bookworm workaround Ceres ships
 * (packaging/bdii/ldap-client-compat: bdii 6.0 passes `-h/-p`, which OpenLDAP 2.5's
 * clients dropped).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onPath } from '../interop/arc-cli.js';
import { until } from './poll.js';

export const GLUE_SCHEMA = '/etc/ldap/schema/GLUE20.schema';
export const ROOT_DN = 'o=glue';
export const ROOT_PW = 'secret';
const PACKAGING = fileURLToPath(new URL('../../../packaging/bdii/', import.meta.url));
export const PROVIDER_SCRIPT = join(PACKAGING, 'ceres-glue2-provider');

/** Why the LDAP tests cannot run here, or false. CERES_REQUIRE_LDAP=1 (CI) makes it a failure. */
export function ldapSkip(withBdii = false): string | false {
  const missing = ['slapd', 'ldapadd', 'ldapsearch', ...(withBdii ? ['bdii-update'] : [])].filter(
    (c) => !onPath(c, `${process.env.PATH ?? ''}:/usr/sbin`),
  );
  if (!existsSync(GLUE_SCHEMA)) missing.push(GLUE_SCHEMA);
  if (missing.length === 0) return false;
  const required = (process.env.CERES_REQUIRE_LDAP ?? '') !== '' && process.env.CERES_REQUIRE_LDAP !== '0';
  const why = `missing ${missing.join(', ')} (install slapd ldap-utils glue-schema bdii)`;
  if (required) throw new Error(`CERES_REQUIRE_LDAP is set but ${why}`);
  return why;
}

/** A TCP port free on 127.0.0.1 now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

export interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(cmd: string, args: readonly string[], input?: string, env?: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      cmd,
      args,
      { timeout: 60_000, maxBuffer: 64 * 1024 * 1024, env: env ?? process.env },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    if (input !== undefined) child.stdin?.end(input);
  });
}

export class Slapd {
  readonly url: string;
  readonly #child: ChildProcess;
  #log = '';

  private constructor(
    readonly dir: string,
    readonly port: number,
    child: ChildProcess,
  ) {
    this.url = `ldap://127.0.0.1:${port}`;
    this.#child = child;
    child.stderr?.on('data', (d: Buffer) => (this.#log += d.toString()));
  }

  /** The slapd configuration file (bdii-update reads rootdn/rootpw from it). */
  get confFile(): string {
    return join(this.dir, 'slapd.conf');
  }

  static async start(dir: string): Promise<Slapd> {
    const port = await freePort();
    mkdirSync(join(dir, 'glue'), { recursive: true });
    writeFileSync(
      join(dir, 'slapd.conf'),
      [
        'include /etc/ldap/schema/core.schema',
        'include /etc/ldap/schema/cosine.schema',
        'include /etc/ldap/schema/nis.schema',
        `include ${GLUE_SCHEMA}`,
        'modulepath /usr/lib/ldap',
        'moduleload back_mdb',
        `pidfile ${join(dir, 'slapd.pid')}`,
        `argsfile ${join(dir, 'slapd.args')}`,
        'sizelimit unlimited',
        'database mdb',
        'suffix "o=glue"',
        `rootdn "${ROOT_DN}"`,
        `rootpw ${ROOT_PW}`,
        `directory ${join(dir, 'glue')}`,
        'index objectClass eq,pres',
        '',
      ].join('\n'),
    );
    // Foreground (-d 0): a daemonised slapd of this version may exit silently later.
    const child = spawn(
      '/usr/sbin/slapd',
      ['-d', '0', '-f', join(dir, 'slapd.conf'), '-h', `ldap://127.0.0.1:${port}`],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const s = new Slapd(dir, port, child);
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`slapd exited (${child.exitCode}): ${s.#log}`);
      return (await run('ldapsearch', ['-x', '-H', s.url, '-b', '', '-s', 'base', 'namingContexts'])).code === 0;
    }, 'slapd answers');
    return s;
  }

  /** ldapadd as the root DN; `-c` goes on after a refused entry (as bdii-update does). */
  add(ldif: string, continueOnError = false): Promise<Run> {
    return run(
      'ldapadd',
      ['-x', '-H', this.url, '-D', ROOT_DN, '-w', ROOT_PW, ...(continueOnError ? ['-c'] : [])],
      ldif,
    );
  }

  /** Anonymous search (as clients do), LDIF without line wrapping. */
  async search(base: string, filter: string, attrs: readonly string[] = []): Promise<string> {
    const r = await run('ldapsearch', [
      '-x',
      '-LLL',
      '-o',
      'ldif-wrap=no',
      '-H',
      this.url,
      '-b',
      base,
      filter,
      ...attrs,
    ]);
    if (r.code !== 0 && r.code !== 32) throw new Error(`ldapsearch ${filter} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  }

  log(): string {
    return this.#log;
  }

  async stop(): Promise<void> {
    if (this.#child.exitCode !== null) return;
    const ended = new Promise((r) => this.#child.once('exit', r));
    this.#child.kill('SIGTERM');
    await ended;
  }
}

/** Values of `attr` in ldapsearch output, base64 ones decoded. */
export function valuesOf(ldif: string, attr: string): string[] {
  const out: string[] = [];
  for (const line of ldif.split('\n')) {
    const m = /^([^:]+)(::?) ?(.*)$/.exec(line);
    if (!m || m[1]!.toLowerCase() !== attr.toLowerCase()) continue;
    out.push(m[2] === '::' ? Buffer.from(m[3]!, 'base64').toString('utf8') : m[3]!);
  }
  return out;
}

/** The entries of ldapsearch output. */
export function entriesOf(ldif: string): string[] {
  return ldif
    .split(/\n\n+/)
    .map((e) => e.trim())
    .filter((e) => e.startsWith('dn:') || e.startsWith('dn::'));
}

/**
 * The real bdii-update loop (daemon mode) feeding `slapd` from one provider script,
 * every `breatheSeconds`. Its pid comes from its pid file; stop() ends it by that pid.
 */
export class BdiiUpdate {
  private constructor(
    readonly dir: string,
    readonly pid: number,
  ) {}

  static async start(
    dir: string,
    slapd: Slapd,
    provider: string,
    env: Record<string, string>,
    o: { readonly breatheSeconds?: number; readonly user?: string } = {},
  ): Promise<BdiiUpdate> {
    const breatheSeconds = o.breatheSeconds ?? 2;
    for (const d of ['ldif', 'provider', 'plugin', 'var', 'run', 'bin']) mkdirSync(join(dir, d), { recursive: true });
    symlinkSync(provider, join(dir, 'provider', 'ceres-glue2-provider'));
    for (const tool of ['ldapadd', 'ldapmodify', 'ldapdelete', 'ldapsearch'])
      symlinkSync(join(PACKAGING, 'ldap-client-compat'), join(dir, 'bin', tool));
    const conf = join(dir, 'bdii.conf');
    writeFileSync(
      conf,
      [
        `BDII_LOG_FILE=${join(dir, 'bdii-update.log')}`,
        `BDII_PID_FILE=${join(dir, 'run', 'bdii-update.pid')}`,
        `BDII_RUN_DIR=${join(dir, 'run')}`,
        'BDII_LOG_LEVEL=INFO',
        `BDII_LDIF_DIR=${join(dir, 'ldif')}`,
        `BDII_PROVIDER_DIR=${join(dir, 'provider')}`,
        `BDII_PLUGIN_DIR=${join(dir, 'plugin')}`,
        `BDII_VAR_DIR=${join(dir, 'var')}`,
        'BDII_HOSTNAME=127.0.0.1',
        `BDII_PORT=${slapd.port}`,
        `BDII_BREATHE_TIME=${breatheSeconds}`,
        'BDII_READ_TIMEOUT=30',
        'BDII_ARCHIVE_SIZE=0',
        'BDII_DELETE_DELAY=0',
        `SLAPD_CONF=${slapd.confFile}`,
        '',
      ].join('\n'),
    );
    // As BDII runs it: its own account (openldap), its own PATH (the compat wrappers first).
    const vars = Object.entries({ ...env, PATH: `${join(dir, 'bin')}:/usr/sbin:/usr/bin:/sbin:/bin` }).map(
      ([k, v]) => `${k}=${v}`,
    );
    const command = ['env', '-i', ...vars, '/usr/sbin/bdii-update', '-c', conf, '-d'];
    if (o.user !== undefined) await run('chown', ['-R', o.user, dir]);
    const r =
      o.user === undefined
        ? await run(command[0]!, command.slice(1))
        : await run('runuser', ['-u', o.user, '--', ...command]);
    if (r.code !== 0) throw new Error(`bdii-update did not start (${r.code}): ${r.stderr}`);
    const pidFile = join(dir, 'run', 'bdii-update.pid');
    await until(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() !== '', 'bdii-update pid file');
    return new BdiiUpdate(dir, Number(readFileSync(pidFile, 'utf8').trim()));
  }

  log(): string {
    try {
      return readFileSync(join(this.dir, 'bdii-update.log'), 'utf8');
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    try {
      process.kill(this.pid, 'SIGTERM');
    } catch {
      return; // already gone
    }
    await until(
      () => {
        try {
          process.kill(this.pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      'bdii-update ends',
      30_000,
    );
  }
}
