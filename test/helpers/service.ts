/**
 * Runs the real service (`ceres serve`) as a child process on a free port with a fresh
 * state directory, and talks to it over real TLS with the dev PKI's user proxy.
 * Used by the end-to-end, crash-safety and interop tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

export interface RunningCeres {
  readonly url: string;
  readonly pkiDir: string;
  readonly stateDir: string;
  readonly child: ChildProcess;
  readonly port: number;
  /** Output so far (stdout + stderr). */
  output(): string;
}

/**
 * A fresh folder under the system's temporary folder, passable by everyone (0711, not
 * listable): a service started as root runs jobs as an unprivileged account (`nobody`
 * without a mapping), which must reach the session directories of a state directory made
 * inside it, as an administrator's /var/lib would let it.
 */
export function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), `ceres-${prefix}-`));
  chmodSync(d, 0o711);
  return d;
}

/**
 * An empty file every job may append to (0666): a ledger of runs outside the session
 * directory, for a service that runs its jobs as an unprivileged account (root tests).
 */
export function jobWritableFile(path: string): string {
  writeFileSync(path, '');
  chmodSync(path, 0o666);
  return path;
}

export async function startCeres(
  opts: {
    stateDir?: string;
    listen?: string;
    config?: Record<string, unknown>;
    nodeArgs?: readonly string[];
    /**
     * A command the service runs under, e.g. `strace ... -e inject=SYSCALL:signal=KILL` to
     * kill it at one system call (fault injection without a hook in the service). `child`
     * is then that command's process, which ends when the service does.
     */
    wrap?: readonly string[];
  } = {},
): Promise<RunningCeres> {
  const stateDir = opts.stateDir ?? tempDir('state');
  mkdirSync(stateDir, { recursive: true });
  const args = [
    ...(opts.nodeArgs ?? []),
    MAIN,
    'serve',
    '--listen',
    opts.listen ?? '127.0.0.1:0',
    '--state-dir',
    stateDir,
  ];
  if (opts.config) {
    const f = join(stateDir, 'test-config.json');
    writeFileSync(f, JSON.stringify({ log: { level: 'warn' }, ...opts.config }));
    args.push('--config', f);
  } else {
    const f = join(stateDir, 'test-config.json');
    writeFileSync(f, JSON.stringify({ log: { level: 'warn' } }));
    args.push('--config', f);
  }
  const [file, ...pre] = [...(opts.wrap ?? []), process.execPath];
  const child = spawn(file, [...pre, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  // Generous: with test files running side by side on a loaded machine a start has been
  // seen to take over a minute; a quick start does not wait for it.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    const url = /service URL (\S+)/.exec(out)?.[1];
    const pki = /(?:PKI folder|CA directory) (\S+)/.exec(out)?.[1];
    if (url && pki) {
      const port = Number(new URL(url).port);
      return { url, pkiDir: pki, stateDir, child, port, output: () => out };
    }
    if (child.exitCode !== null) throw new Error(`ceres exited (${child.exitCode}): ${out}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`ceres did not start: ${out}`);
}

export async function stopCeres(c: RunningCeres, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  // Already ended (by an exit or a signal: a killed child has signalCode set and no exitCode).
  if (c.child.exitCode !== null || c.child.signalCode !== null) return c.child.exitCode;
  const done = new Promise<number | null>((r) => c.child.once('exit', (code) => r(code)));
  c.child.kill(signal);
  return done;
}

export function removeDir(d: string): void {
  rmSync(d, { recursive: true, force: true });
}

/** An HTTPS client authenticated with a PEM credential file (proxy: cert + key + chain). */
export class Client {
  readonly agent: Agent;
  constructor(
    readonly base: string,
    /** PEM credential file (proxy: cert + key + chain); null: no client certificate. */
    credentialFile: string | null,
    caFile: string,
    /** Sent with every request (e.g. `authorization: Bearer ...`). */
    readonly headers: Record<string, string> = {},
  ) {
    const pem = credentialFile === null ? undefined : readFileSync(credentialFile, 'utf8');
    this.agent = new Agent({
      connect: { ...(pem === undefined ? {} : { cert: pem, key: pem }), ca: readFileSync(caFile, 'utf8') },
    });
  }

  /** A client without a client certificate, authenticated by a bearer token only. */
  static withToken(c: RunningCeres, token: string): Client {
    return new Client(c.url, null, join(c.pkiDir, 'ca.pem'), { authorization: `Bearer ${token}` });
  }

  static forUser(c: RunningCeres, credential = 'userproxy.pem'): Client {
    return new Client(c.url, join(c.pkiDir, credential), join(c.pkiDir, 'ca.pem'));
  }

  async req(
    method: string,
    path: string,
    body?: string | Buffer,
    headers: Record<string, string> = {},
  ): Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    text: string;
    json: () => any;
  }> {
    const r = await request(`${this.base}${path}`, {
      method: method as 'GET',
      dispatcher: this.agent,
      headers: { accept: 'application/json', ...this.headers, ...headers },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await r.body.text();
    return { status: r.statusCode, headers: r.headers, text, json: () => JSON.parse(text) };
  }

  async submit(desc: string, version = '1.1'): Promise<any[]> {
    const r = await this.req('POST', `/rest/${version}/jobs?action=new`, desc);
    if (r.status !== 201) throw new Error(`submit: ${r.status} ${r.text}`);
    return r.json().job as any[];
  }

  async status(ids: string[]): Promise<Map<string, string>> {
    const r = await this.req(
      'POST',
      '/rest/1.1/jobs?action=status',
      JSON.stringify({ job: ids.map((id) => ({ id })) }),
      { 'content-type': 'application/json' },
    );
    return new Map(
      (r.json().job as any[]).map((j) => [j.id as string, (j.state as string) ?? `HTTP${j['status-code']}`]),
    );
  }

  async action(action: string, ids: string[]): Promise<any[]> {
    const r = await this.req(
      'POST',
      `/rest/1.1/jobs?action=${action}`,
      JSON.stringify({ job: ids.map((id) => ({ id })) }),
      { 'content-type': 'application/json' },
    );
    return r.json().job as any[];
  }

  /** Poll until every job is in one of `states` (or the timeout passes); returns the last states. */
  async waitFor(ids: string[], states: string[], timeoutMs = 60_000): Promise<Map<string, string>> {
    const deadline = Date.now() + timeoutMs;
    let last = new Map<string, string>();
    while (Date.now() < deadline) {
      last = await this.status(ids);
      if ([...last.values()].every((s) => states.includes(s))) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    return last;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** A process exists and is not a zombie (orphans may stay unreaped where pid 1 does not reap). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * SIGKILL every process whose command line names `dir` (a test's state folder): a batch job
 * whose batch system was stopped under it must not outlive its test file, where another file's
 * job could meet it (a job looking for its wrapper in /proc, a port, a file).
 */
export function killProcessesUnder(dir: string): number {
  let n = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p) || Number(p) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(dir)) {
        process.kill(Number(p), 'SIGKILL');
        n++;
      }
    } catch {
      // Gone already, or not ours to read.
    }
  }
  return n;
}
