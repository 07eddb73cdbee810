/**
 * `npm run build && node dist/bench/apel-send.js [--jobs 100000] [--messages individual|summaries] [--batch 500]`
 *
 * Accounting of `--jobs` finished jobs sent to APEL by the real service, to the loopback
 * fake messaging service (test/helpers/fake-ams.ts, which checks every signature with
 * openssl): the records are written into a fresh state database, the service is
 * started, and the time is taken from its start until the fake service holds every
 * record (individual: every LocalJobId; summaries: NumberOfJobs of the sync messages).
 * Prints one JSON document, with the CPU time of the service (its openssl processes
 * included) and of the fake service (the signature checks' processes not included).
 * The target (issue 42): 100,000 jobs in under 60 s.
 */
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { insertRecords } from '../test/helpers/accounting-records.js';
import { apelConfig, apelSite, jobIdsOf, jobsIn, withSiteDb } from '../test/helpers/apel-site.js';
import { removeDir, startCeres, stopCeres } from '../test/helpers/service.js';
import { until } from '../test/helpers/poll.js';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '100000' },
    messages: { type: 'string', default: 'individual' },
    batch: { type: 'string', default: '500' },
  },
});
const jobs = Number(values.jobs);
const messages = values.messages === 'summaries' ? 'summaries' : 'individual';

/** CPU seconds of a process and of its children it waited for (the openssl processes), from /proc. */
function cpuSecondsOf(pid: number): number | null {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime, stime, cutime, cstime: fields 14 to 17, in clock ticks (100 a second on Linux).
    return +(f.slice(11, 15).reduce((a, x) => a + Number(x), 0) / 100).toFixed(2);
  } catch {
    return null;
  }
}

const s = await apelSite('apel-bench');
try {
  // Two months' worth of runs, a job ending every 50 s.
  const t0 = performance.now();
  withSiteDb(s, (db) => insertRecords(db, jobs, { fromMs: Date.UTC(2026, 9, 1), stepMs: 50_000, users: 20 }));
  const seedMs = performance.now() - t0;
  const t1 = performance.now();
  const cpu0 = process.cpuUsage();
  const ceres = await startCeres({
    stateDir: s.stateDir,
    config: apelConfig(s, { messages, batchSize: Number(values.batch) }),
  });
  const startMs = performance.now() - t1;
  // Counted as messages arrive, each parsed once: parsing every text at every poll would
  // cost the bench more CPU than the service spends on the sending.
  const ids = new Set<string>();
  let synced = 0;
  let parsed = 0;
  const arrived = (): number => {
    const texts = s.ams.texts();
    for (; parsed < texts.length; parsed++) {
      const t = texts[parsed]!;
      if (messages === 'individual') for (const id of jobIdsOf([t])) ids.add(id);
      else if (t.startsWith('APEL-sync-message')) synced += jobsIn(t);
    }
    return messages === 'individual' ? ids.size : synced;
  };
  let serviceCpu: number | null = null;
  try {
    await until(() => arrived() >= jobs, `${jobs} records at the fake service`, 600_000);
    serviceCpu = cpuSecondsOf(ceres.child.pid!);
  } finally {
    await stopCeres(ceres);
  }
  const totalMs = performance.now() - t1;
  const fakeCpu = process.cpuUsage(cpu0);
  await s.ams.verified();
  const bad = s.ams.received.filter((m) => m.signatureError !== undefined).length;
  process.stdout.write(
    `${JSON.stringify(
      {
        jobs,
        messages,
        batchSize: Number(values.batch),
        seedSeconds: +(seedMs / 1000).toFixed(2),
        serviceStartSeconds: +(startMs / 1000).toFixed(2),
        sentSeconds: +(totalMs / 1000).toFixed(2),
        serviceCpuSeconds: serviceCpu,
        fakeServiceCpuSeconds: +((fakeCpu.user + fakeCpu.system) / 1e6).toFixed(2),
        loadAverage: loadavg()[0],
        amsMessages: s.ams.received.length,
        badSignatures: bad,
        underMinute: totalMs < 60_000,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await s.ams.close();
  removeDir(s.dir);
}
