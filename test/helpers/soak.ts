/**
 * The short soak and chaos runs of the test suite: a Ceres the harness can kill and
 * restart (bench/soak/service.ts), the dev PKI's user and a second one, the ledger,
 * and the run itself; the tests then assert on the report, one check per test so a
 * failure says which invariant broke.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeLedger, type Ledger } from '../../bench/soak/ledger.js';
import { runSoak, type SoakReport } from '../../bench/soak/run.js';
import { CeresService, exitText } from '../../bench/soak/service.js';
import { devPkiUsers, mixUsers } from '../../bench/soak/users.js';
import { mappedUsers } from '../../bench/soak/mapped.js';
import { removeDir, tempDir } from './service.js';

export interface ShortRun {
  readonly report: SoakReport;
  readonly service: CeresService;
  readonly ledger: Ledger;
  /** The local accounts of a mapped run. */
  readonly accounts: readonly string[];
  /** Removes the state; the service is already stopped. */
  cleanup(): void;
  /** The service's error log lines (pino level >= 50), folded by message, for failure messages. */
  logErrors(): string;
}

export async function shortSoak(o: {
  clients: number;
  seconds: number;
  warmupS: number;
  settleS: number;
  chaos?: { minMs: number; maxMs: number; minKills?: number; maxS?: number };
  /**
   * Seconds the mix's kill jobs sleep. A kill whose request a `kill -9` left unanswered
   * leaves its job sleeping to the end: the wait for every job to end after the mix lasts
   * this long.
   */
  killSleepS?: number;
  /** Two users mapped to two new local accounts, the service as root (bench/soak/mapped.ts). */
  mapped?: boolean;
}): Promise<ShortRun> {
  const root = tempDir('soak');
  const ledger = await makeLedger(root);
  const accounts = o.mapped === true ? await mappedUsers(root, join(root, 'service', 'state'), ledger) : undefined;
  let service: CeresService;
  try {
    service = await CeresService.start(join(root, 'service'), accounts?.config ?? {});
  } catch (e) {
    accounts?.remove();
    throw e;
  }
  const files = accounts?.files ?? (await devPkiUsers(service.pkiDir));
  const users = await mixUsers(service.url, files, Math.ceil(o.clients / files.length), '1.1', 60);
  try {
    const report = await runSoak({
      users,
      clients: o.clients,
      seconds: o.seconds,
      warmupS: o.warmupS,
      ledger,
      pids: () => (service.pid === undefined ? [] : [service.pid]),
      settleS: o.settleS,
      runId: randomBytes(3).toString('hex'),
      service,
      ...(o.killSleepS !== undefined ? { killSleepS: o.killSleepS } : {}),
      // CERES_SOAK_PROGRESS=1: the run's phases with their times on stderr, to see where a
      // slow run spends its time.
      ...(process.env.CERES_SOAK_PROGRESS === '1'
        ? { progress: (t: string) => console.error(`${new Date().toISOString()} ${t}`) }
        : {}),
      ...(o.chaos !== undefined ? { chaos: { service, ...o.chaos } } : {}),
    });
    return {
      report,
      service,
      ledger,
      accounts: accounts?.accounts.map((a) => a.name) ?? [],
      cleanup: () => {
        accounts?.remove();
        removeDir(root);
      },
      logErrors: () => logErrors(service.logPath),
    };
  } finally {
    for (const u of users) await u.client.close();
    await service.stop();
  }
}

/** The crashes of a run, one line each with the log's last lines. */
export function crashText(r: SoakReport): string {
  return r.crashes.map((e) => `pid ${e.pid}: ${exitText(e)} at ${e.at}\n${e.logTail ?? ''}`).join('\n---\n');
}

/** A few lines about the run, for assertion messages. */
export function runText(r: SoakReport): string {
  return `${r.requests} requests in ${r.seconds} s from ${r.clients} clients (${r.users} users), ${r.verdict.acknowledged} jobs acknowledged, ${r.abortedUploads} aborted uploads${r.chaos ? `, ${r.chaos.kills} kills` : ''}; uploads still owed at the end: ${r.owedUploads.uploaded} made, ${r.owedUploads.killed} jobs killed (${Object.entries(
    r.owedUploads.answers,
  )
    .map(([k, n]) => `${n} × ${k}`)
    .join(', ')})`;
}

/** "12 × unexpected error: EBADF: bad file descriptor, close (at ...)" lines from a pino log. */
export function logErrors(path: string, max = 8): string {
  const folded = new Map<string, number>();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) {
      if (/Error|abort|Assertion/i.test(line))
        folded.set(line.slice(0, 300), (folded.get(line.slice(0, 300)) ?? 0) + 1);
      continue;
    }
    let o: {
      level?: number;
      msg?: string;
      err?: { message?: string; stack?: string };
      req?: { method?: string; url?: string };
    };
    try {
      o = JSON.parse(line);
    } catch {
      continue;
    }
    if ((o.level ?? 0) < 50) continue;
    const where =
      o.err?.stack
        ?.split('\n')
        .find((l) => l.includes('/src/'))
        ?.trim() ?? '';
    const k = `${o.msg ?? ''}: ${o.err?.message ?? ''}${where ? ` (${where.replace(/.*\/dist\//, '')})` : ''}`.slice(
      0,
      300,
    );
    folded.set(k, (folded.get(k) ?? 0) + 1);
  }
  return [...folded.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, max)
    .map(([k, n]) => `${n} × ${k}`)
    .join('\n');
}
