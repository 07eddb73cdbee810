/**
 * Linux /proc readings about the server under test: which process listens on the
 * endpoint's port, its resident memory (VmRSS) and CPU time, and machine-wide CPU use
 * (for waiting until the machine is quiet). Parsers are pure; the readers return
 * undefined where /proc is not readable (another OS, another user's process).
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat and /proc/stat (USER_HZ; 100 on Linux). */
export const USER_HZ = 100;

/**
 * Socket inodes listening on `port` in a /proc/net/tcp or tcp6 table. Columns:
 * sl local_address rem_address st ...; local_address is HEXIP:HEXPORT, st 0A = LISTEN,
 * the inode is the 10th column.
 */
export function listeningInodes(table: string, port: number): string[] {
  const out: string[] = [];
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of table.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10) continue;
    const local = f[1] ?? '';
    if (f[3] !== '0A') continue;
    if (local.slice(local.lastIndexOf(':') + 1).toUpperCase() !== hexPort) continue;
    const inode = f[9];
    if (inode !== undefined && inode !== '0') out.push(inode);
  }
  return out;
}

/** VmRSS in KiB from /proc/<pid>/status text. */
export function parseVmRssKiB(status: string): number | undefined {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
  return m ? Number(m[1]) : undefined;
}

/**
 * utime+stime (ticks) and ppid from /proc/<pid>/stat. The command name (field 2) may
 * contain spaces and parentheses, so fields are counted after its last ')'.
 */
export function parseStat(stat: string): { ppid: number; ticks: number } | undefined {
  const close = stat.lastIndexOf(')');
  if (close < 0) return undefined;
  const f = stat.slice(close + 2).split(' ');
  // after ')': state(3) ppid(4) ... utime(14) stime(15) -> indexes 0,1,...,11,12
  const ppid = Number(f[1]);
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  if (![ppid, utime, stime].every(Number.isFinite)) return undefined;
  return { ppid, ticks: utime + stime };
}

/** Busy and total ticks of all CPUs from the first line of /proc/stat. */
export function parseCpuLine(procStat: string): { busy: number; total: number } | undefined {
  const line = procStat.split('\n', 1)[0] ?? '';
  if (!line.startsWith('cpu ')) return undefined;
  const v = line.trim().split(/\s+/).slice(1).map(Number);
  if (v.length < 4 || v.some((x) => !Number.isFinite(x))) return undefined;
  const idle = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
  const total = v.slice(0, 8).reduce((a, b) => a + b, 0); // guest time is already in user
  return { busy: total - idle, total };
}

async function readText(p: string): Promise<string | undefined> {
  try {
    return await readFile(p, 'utf8');
  } catch {
    return undefined;
  }
}

/** Pids of processes holding a listening socket on `port` (loopback or any address). */
export async function pidsListeningOn(port: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const t of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readText(t);
    if (text) for (const i of listeningInodes(text, port)) inodes.add(i);
  }
  if (inodes.size === 0) return [];
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return [];
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e)) continue;
    let fds: string[];
    try {
      fds = await readdir(`/proc/${e}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      const target = await readlink(`/proc/${e}/fd/${fd}`).catch(() => '');
      const m = /^socket:\[(\d+)\]$/.exec(target);
      if (m && inodes.has(m[1] ?? '')) {
        pids.push(Number(e));
        break;
      }
    }
  }
  return pids;
}

export async function rssKiB(pid: number): Promise<number | undefined> {
  const s = await readText(`/proc/${pid}/status`);
  return s === undefined ? undefined : parseVmRssKiB(s);
}

/** Sum of VmRSS of the pids, in MiB; undefined if none could be read. */
export async function rssMiB(pids: readonly number[]): Promise<number | undefined> {
  let sum = 0;
  let any = false;
  for (const p of pids) {
    const k = await rssKiB(p);
    if (k !== undefined) {
      sum += k;
      any = true;
    }
  }
  return any ? sum / 1024 : undefined;
}

/** CPU seconds (user+system) used so far by the pids; undefined if none could be read. */
export async function cpuSeconds(pids: readonly number[]): Promise<number | undefined> {
  let sum = 0;
  let any = false;
  for (const p of pids) {
    const s = await readText(`/proc/${p}/stat`);
    const st = s === undefined ? undefined : parseStat(s);
    if (st) {
      sum += st.ticks;
      any = true;
    }
  }
  return any ? sum / USER_HZ : undefined;
}

export async function machineCpu(): Promise<{ busy: number; total: number } | undefined> {
  const s = await readText('/proc/stat');
  return s === undefined ? undefined : parseCpuLine(s);
}

/** The process exists and is not a zombie (a crashed server's pid is gone or Z until reaped). */
export async function processAlive(pid: number): Promise<boolean> {
  const s = await readText(`/proc/${pid}/stat`);
  if (s === undefined) return false;
  return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3) !== 'Z';
}
