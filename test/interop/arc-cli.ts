/**
 * Runs the real NorduGrid ARC command-line client (arcproxy, arcsub, arcstat, ...) in an
 * isolated environment: its own HOME and client.conf, an explicit proxy, CA directory and
 * job list, C locale (the client's messages are translated otherwise), and a timeout on
 * every command. Failures carry everything needed to diagnose them from a CI log: the
 * command line, exit status, stdout, stderr and the tail of the service's log.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** The commands the life cycle needs; all come with Debian's nordugrid-arc-client. */
export const ARC_COMMANDS = [
  'arcproxy',
  'arcinfo',
  'arcsub',
  'arcstat',
  'arccat',
  'arcget',
  'arcls',
  'arcrenew',
  'arckill',
  'arcresume',
  'arcsync',
  'arcclean',
] as const;
export type ArcCommand = (typeof ARC_COMMANDS)[number];

export function onPath(cmd: string, path = process.env.PATH ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, cmd), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export function missingArcCommands(): string[] {
  return ARC_COMMANDS.filter((c) => !onPath(c));
}

/** CI sets CERES_REQUIRE_INTEROP=1: there a missing client is a failure, not a skip. */
export function interopRequired(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CERES_REQUIRE_INTEROP;
  return v !== undefined && v !== '' && v !== '0';
}

export interface RunResult {
  readonly command: string;
  readonly code: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ArcSetup {
  /** Work directory: HOME, client.conf, job lists, downloads. */
  readonly dir: string;
  readonly proxy: string;
  readonly caDir: string;
  /** Tail of the service log, appended to failure reports. */
  readonly serviceLog: () => string;
}

/** Per-command client timeout (-t); generous for a loaded 2-core CI machine. */
const CLIENT_TIMEOUT_S = 60;
/** Hard limit for the process, above the client's own timeout. */
const PROCESS_TIMEOUT_MS = 90_000;

export class ArcClient {
  readonly home: string;
  readonly conf: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(readonly setup: ArcSetup) {
    this.home = join(setup.dir, 'home');
    this.conf = join(this.home, '.arc', 'client.conf');
    mkdirSync(join(this.home, '.arc'), { recursive: true });
    // Written before the first command so the client does not generate its own default
    // file, and passed with -z so no other user configuration is read. (6.x has no
    // joblist key: every job command gets -j.)
    writeFileSync(
      this.conf,
      [
        '[common]',
        `proxypath = ${setup.proxy}`,
        `cacertificatesdirectory = ${setup.caDir}`,
        `timeout = ${CLIENT_TIMEOUT_S}`,
        '',
      ].join('\n'),
    );
    // Only what the client needs: nothing from the caller's grid environment leaks in
    // (X509_USER_CERT, X509_VOMS_DIR, ARC_* of a developer's machine).
    this.env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.home,
      LC_ALL: 'C',
      LANG: 'C',
      TZ: 'UTC',
      X509_USER_PROXY: setup.proxy,
      X509_CERT_DIR: setup.caDir,
    };
  }

  /** Runs `cmd args` with -z/-t added; never throws (check the result). */
  run(cmd: ArcCommand, args: readonly string[], opts: { cwd?: string } = {}): Promise<RunResult> {
    const full = ['-z', this.conf, '-t', String(CLIENT_TIMEOUT_S), ...args];
    const command = [cmd, ...full].map(shellQuote).join(' ');
    return new Promise((resolve) => {
      execFile(
        cmd,
        full,
        {
          cwd: opts.cwd ?? this.setup.dir,
          env: this.env,
          timeout: PROCESS_TIMEOUT_MS,
          killSignal: 'SIGKILL',
          maxBuffer: 16 * 1024 * 1024,
          encoding: 'utf8',
        },
        (err, stdout, stderr) => {
          const e = err as
            (NodeJS.ErrnoException & { code?: number | string; signal?: string; killed?: boolean }) | null;
          const code = e === null ? 0 : typeof e.code === 'number' ? e.code : null;
          resolve({
            command,
            code,
            signal: e?.signal ?? null,
            timedOut: e?.killed === true && e.signal === 'SIGKILL',
            stdout,
            stderr: e !== null && typeof e.code === 'string' ? `${stderr}\n${e.message}` : stderr,
          });
        },
      );
    });
  }

  /** Runs and requires exit status 0. */
  async ok(cmd: ArcCommand, args: readonly string[], opts: { cwd?: string } = {}): Promise<RunResult> {
    const r = await this.run(cmd, args, opts);
    if (r.code !== 0) throw new Error(this.report(r, 'expected exit status 0'));
    return r;
  }

  /** Requires `re` in stdout (or in stdout+stderr with `anywhere`). */
  expect(r: RunResult, re: RegExp, what: string, anywhere = false): RegExpExecArray {
    const m = re.exec(anywhere ? `${r.stdout}\n${r.stderr}` : r.stdout);
    if (!m) throw new Error(this.report(r, `${what}: output does not match ${re}`));
    return m;
  }

  /** Requires `re` not to occur in stdout+stderr. */
  expectNot(r: RunResult, re: RegExp, what: string): void {
    if (re.test(`${r.stdout}\n${r.stderr}`)) throw new Error(this.report(r, `${what}: output matches ${re}`));
  }

  report(r: RunResult, problem: string): string {
    const status = r.timedOut ? 'killed after timeout' : r.signal ? `signal ${r.signal}` : `exit ${r.code}`;
    return [
      `ARC client: ${problem}`,
      `$ ${r.command}`,
      `(${status})`,
      '--- stdout ---',
      r.stdout.trimEnd(),
      '--- stderr ---',
      r.stderr.trimEnd(),
      '--- service log (tail) ---',
      this.setup.serviceLog(),
    ].join('\n');
  }
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The last `lines` lines of a log text. */
export function tail(text: string, lines = 40): string {
  return text
    .split('\n')
    .slice(-lines - 1)
    .join('\n');
}

/**
 * An ARC client in `work` holding a fresh proxy of the service's development user (whose
 * key has no passphrase, so arcproxy needs no password source).
 */
export async function devUserClient(
  work: string,
  c: { readonly pkiDir: string; output(): string },
): Promise<ArcClient> {
  const arc = new ArcClient({
    dir: work,
    proxy: join(work, 'proxy.pem'),
    caDir: join(c.pkiDir, 'certificates'),
    serviceLog: () => tail(c.output()),
  });
  const pki = (f: string) => join(c.pkiDir, f);
  await arc.ok('arcproxy', [
    '-C',
    pki('usercert.pem'),
    '-K',
    pki('userkey.pem'),
    '-T',
    arc.setup.caDir,
    '-P',
    arc.setup.proxy,
  ]);
  return arc;
}
