/**
 * A private xrootd server for one test file: run as the `xrootd` account (it refuses
 * root), on a random port, answering loopback clients only (`xrd.allow`: xrootd 5.5
 * cannot bind one address), adler32 computed on the server (or told by a program of the
 * test's). Stopped by its pid.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { HELPER_SCRIPT } from '../../../src/staging/gfal2/helper-script.js';

export const XROOTD = '/usr/bin/xrootd';

/** Whether the server and the gfal2 xrootd plugin can run here (root, both installed). */
export function xrootdAvailable(): boolean {
  return (
    process.geteuid?.() === 0 &&
    existsSync(XROOTD) &&
    existsSync('/usr/bin/python3') &&
    spawnSync('id', ['xrootd']).status === 0 &&
    spawnSync('/usr/bin/python3', ['-c', 'import gfal2']).status === 0
  );
}

export class XrootdServer {
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly pid: number,
    /** GSI: the name in the host certificate (its CN), which the client checks the URL's host against. */
    readonly host = '127.0.0.1',
  ) {}

  /** `root://127.0.0.1:<port>//data/<name>` (GSI: `localhost`) */
  url(name: string): string {
    return `root://${this.host}:${this.port}//data/${name}`;
  }

  /** The server's file for `name` (the export root). */
  path(name: string): string {
    return join(this.dir, 'root', 'data', name);
  }

  async put(name: string, data: Buffer): Promise<void> {
    await writeFile(this.path(name), data);
    const ids = uidGid();
    await chown(this.path(name), ids.uid, ids.gid);
  }

  /**
   * `gsi`: GSI authentication only (no anonymous access), trusting the CA directory
   * `certDir` (`<hash>.0` files), with this host certificate and key (copied to the
   * server's folder, the key 0400 and the xrootd account's, as xrootd demands).
   */
  static async start(
    opts: {
      gsi?: { certDir: string; hostCert: string; hostKey: string };
      /** A program the server runs for adler32 instead of computing it (it prints the value): a server that lies. */
      checksumProgram?: string;
    } = {},
  ): Promise<XrootdServer> {
    const dir = await mkdtemp(join(tmpdir(), 'ceres-xrootd-'));
    await chmod(dir, 0o755);
    const { uid, gid } = uidGid();
    for (const d of ['root', 'root/data', 'run', 'log', 'grid']) {
      await mkdir(join(dir, d), { recursive: true });
      await chown(join(dir, d), uid, gid);
    }
    const security: string[] = [];
    if (opts.gsi !== undefined) {
      const cert = join(dir, 'grid', 'hostcert.pem');
      const key = join(dir, 'grid', 'hostkey.pem');
      await writeFile(cert, opts.gsi.hostCert, { mode: 0o644 });
      await writeFile(key, opts.gsi.hostKey, { mode: 0o400 });
      for (const f of [cert, key]) await chown(f, uid, gid);
      security.push(
        'xrootd.seclib libXrdSec.so',
        `sec.protocol gsi -certdir:${opts.gsi.certDir} -cert:${cert} -key:${key} -gmapopt:0 -crl:0 -ca:1 -vomsat:0 -dlgpxy:0`,
        'sec.protbind * only gsi',
      );
    }
    for (let tries = 0; ; tries++) {
      const port = 20000 + Math.floor(Math.random() * 10000);
      const cfg = join(dir, `xrootd-${port}.cfg`);
      await writeFile(
        cfg,
        [
          `xrd.port ${port}`,
          'xrd.allow host localhost',
          'xrd.allow host 127.0.0.1',
          'all.export /data',
          `oss.localroot ${join(dir, 'root')}`,
          opts.checksumProgram === undefined
            ? 'xrootd.chksum adler32'
            : `xrootd.chksum adler32 ${opts.checksumProgram}`,
          `all.adminpath ${join(dir, 'run')}`,
          `all.pidpath ${join(dir, 'run')}`,
          ...security,
          '',
        ].join('\n'),
      );
      const proc = spawn(XROOTD, ['-R', 'xrootd', '-c', cfg, '-l', join(dir, 'log', 'xrootd.log'), '-n', 'ceres'], {
        stdio: 'ignore',
      });
      const pid = proc.pid as number;
      proc.unref();
      // Generous: on a loaded machine xrootd has taken over 20 s to listen.
      if (await listening(port, 60_000, () => proc.exitCode !== null))
        return new XrootdServer(dir, port, pid, opts.gsi === undefined ? '127.0.0.1' : 'localhost');
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // it ended between the last look and now (ESRCH): nothing to stop
      }
      if (tries >= 4)
        throw new Error(
          `xrootd did not start: ${await readFile(join(dir, 'log', 'xrootd.log'), 'utf8').catch(() => '')}`,
        );
    }
  }

  /** Kills the server (SIGKILL: a crash, not a shutdown) and waits until its port is closed. */
  async kill(): Promise<void> {
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    for (let i = 0; i < 200 && (await open(this.port)); i++) await new Promise((r) => setTimeout(r, 50));
  }

  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }
}

function uidGid(): { uid: number; gid: number } {
  const uid = Number(spawnSync('id', ['-u', 'xrootd']).stdout.toString().trim());
  const gid = Number(spawnSync('id', ['-g', 'xrootd']).stdout.toString().trim());
  return { uid, gid };
}

function open(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

async function listening(port: number, ms: number, died: () => boolean): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await open(port)) return true;
    if (died()) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

/**
 * The gfal2 helper processes this test process started and that still run (children
 * running the helper's script, not the short-lived plugin probe), by pid: read from /proc,
 * so a helper left behind is seen. `job`: helpers bound to a job (the name the helper
 * gives itself on its bind, `gfal2-job`); `spare`: idle spares (`gfal2-spare`); `any`:
 * both, and one still starting.
 */
export async function gfal2HelperPids(kind: 'job' | 'spare' | 'any' = 'job'): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8');
      // The helper's own script, not the plugin probe, which also imports gfal2.
      if (!cmdline.includes(HELPER_SCRIPT)) continue;
      const comm = (await readFile(`/proc/${entry}/comm`, 'utf8')).trim();
      if (kind === 'any' || comm === `gfal2-${kind}`) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
