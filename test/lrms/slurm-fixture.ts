// A real single-node Slurm for a test file: started once with scripts/slurm-dev.sh in a
// temporary directory, stopped by pid in `after`. Skipped (with the reason) where Slurm
// is not installed or the tests do not run as root; CERES_REQUIRE_SLURM=1 (set by CI)
// turns that skip into a failure.
import { after, before } from 'node:test';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SLURM_DEV = join(process.cwd(), 'scripts', 'slurm-dev.sh');

/** Why Slurm tests cannot run here (with accounting: slurmdbd and MariaDB too), or undefined when they can. */
export function slurmMissing(accounting = false): string | undefined {
  if (process.getuid?.() !== 0) return 'the Slurm tests need root (the daemons switch users)';
  for (const p of ['/usr/sbin/slurmctld', '/usr/sbin/slurmd', '/usr/sbin/munged', '/usr/bin/sbatch']) {
    if (!existsSync(p))
      return `Slurm is not installed (no ${p}): apt-get install -y --no-install-recommends slurm-wlm munge`;
  }
  if (accounting)
    for (const p of ['/usr/sbin/slurmdbd', '/usr/sbin/mariadbd', '/usr/bin/mariadb-install-db']) {
      if (!existsSync(p))
        return `Slurm accounting is not installed (no ${p}): apt-get install -y --no-install-recommends slurmdbd mariadb-server`;
    }
  return undefined;
}

/** The skip option for describe(): undefined (run), a reason (skip), or a throw when CI requires Slurm. */
export function slurmSkip(accounting = false): string | undefined {
  const why = slurmMissing(accounting);
  if (why !== undefined && process.env.CERES_REQUIRE_SLURM === '1') {
    throw new Error(`CERES_REQUIRE_SLURM=1 but ${why}`);
  }
  return why === undefined ? undefined : `${why}; CERES_REQUIRE_SLURM=1 makes this a failure`;
}

/**
 * A random even port for a private cluster's controller (the slurmd takes the next one),
 * below the range the kernel hands out to outgoing connections and to listeners on port
 * 0, so that no test's own socket holds it.
 */
export function slurmPort(): string {
  let low = 32_768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: keep the usual default.
  }
  const from = 10_000;
  const to = Math.max(from + 2_000, low - 2);
  return String(from + Math.floor((Math.random() * (to - from)) / 2) * 2);
}

export interface SlurmCluster {
  /** The cluster's slurm.conf (SLURM_CONF for every command). */
  conf: string;
  dir: string;
  /** Run a Slurm tool against this cluster. */
  cmd(tool: string, args: string[]): string;
  /** Run scripts/slurm-dev.sh on the cluster. */
  script(action: 'start' | 'stop' | 'status'): void;
  /** The controller alone: kill it, freeze it (SIGSTOP), thaw it, start it again (it recovers its saved state). */
  ctld(action: 'kill' | 'freeze' | 'thaw' | 'start'): void;
}

/**
 * Start a private Slurm before the tests of the file and stop it after them; with
 * `accounting`, with slurmdbd and its MariaDB (sacct answers), as a site that keeps accounting;
 * `env`: the script's switches (SLURM_DEV_EXTRA_PARTITIONS, SLURM_DEV_ACCOUNTS, SLURM_DEV_QOS, ...).
 */
export function useSlurm(o: { accounting?: boolean; env?: Readonly<Record<string, string>> } = {}): SlurmCluster {
  const cluster: SlurmCluster = {
    conf: '',
    dir: '',
    cmd(tool, args) {
      return execFileSync(tool, args, { env: { ...process.env, SLURM_CONF: cluster.conf }, encoding: 'utf8' });
    },
    script(action) {
      const r = spawnSync(SLURM_DEV, [action, cluster.dir], {
        env: { ...process.env, ...o.env, SLURM_DEV_PORT: port, SLURM_DEV_ACCOUNTING: o.accounting ? '1' : '0' },
        encoding: 'utf8',
      });
      if (r.status !== 0 && action !== 'status')
        throw new Error(`slurm-dev.sh ${action} failed: ${r.stderr}${r.stdout}`);
    },
    ctld(action) {
      const pidFile = join(cluster.dir, 'slurmctld.pid');
      if (action === 'start') {
        execFileSync('/usr/sbin/slurmctld', [], { env: { ...process.env, SLURM_CONF: cluster.conf } });
        return;
      }
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      if (!(pid > 0)) throw new Error('no slurmctld pid');
      process.kill(pid, action === 'kill' ? 'SIGKILL' : action === 'freeze' ? 'SIGSTOP' : 'SIGCONT');
      if (action === 'kill') {
        // Wait until it is gone so that a restart can bind its port.
        for (let i = 0; i < 200; i++) {
          try {
            process.kill(pid, 0);
          } catch {
            return;
          }
          execFileSync('sleep', ['0.05']);
        }
      }
    },
  };
  // A port of its own, so that a leftover cluster elsewhere does not answer.
  let port = slurmPort();
  before(async () => {
    cluster.dir = await mkdtemp(join(tmpdir(), 'ceres-slurm-'));
    cluster.conf = join(cluster.dir, 'slurm.conf');
    // A port taken by another program makes the controller exit, and the script says so
    // at once: try another. The start writes the configuration again with the new port.
    for (let attempt = 1; ; attempt++) {
      try {
        cluster.script('start');
        return;
      } catch (e) {
        if (attempt === 3 || !/Address already in use/.test((e as Error).message)) throw e;
        port = slurmPort();
      }
    }
  });
  after(async () => {
    if (cluster.dir === '') return;
    cluster.script('stop');
    await rm(cluster.dir, { recursive: true, force: true });
  });
  return cluster;
}
