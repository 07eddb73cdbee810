// A job that forges its own end under Slurm, through the real service: a mapped user's
// job (running as its local account, as the job wrapper does) burns CPU time, then writes
// the wrapper's status file claiming exit 0, a hundredth of a second of CPU and no memory,
// and kills its wrapper with SIGKILL so that the wrapper cannot write the truth. Slurm saw
// the batch step end by SIGKILL: the job fails with that signal, not the claimed 0, in
// both cases. With slurmdbd (accounting) the record and the ComputingActivity carry
// accounting's CPU time and memory (sacct's), and nothing is marked; without it the
// forged CPU time and memory stay, marked as reported by the job in the accounting
// record, the OGF usage record and the ComputingActivity.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { fromRow, type AccountingRecord, type AccountingRow } from '../../src/accounting/record.js';
import { usageRecordXml } from '../../src/accounting/usage-record.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { assertRoot, createAccount, removeAccounts, type TestAccount } from '../helpers/local-accounts.js';
import { untilValue } from '../helpers/poll.js';
import { sacctSeconds } from '../../src/lrms/slurm/sacct.js';
import { slurmSkip, useSlurm } from './slurm-fixture.js';

/** Seconds of CPU the job burns in its own shell (no child: nothing the wrapper could reap). */
const BURN_SECONDS = 4;

/**
 * The attacker, as the job's account: find the wrapper (the process whose command line is
 * `<lrms dir>/wrapper <lrms dir> ...`), burn CPU, forge `status`, kill the wrapper, exit 3.
 */
const ATTACK = [
  'for p in /proc/[0-9]*; do',
  '  set -- $(tr "\\0" " " < $p/cmdline 2>/dev/null)',
  // Its own wrapper only (the one whose session directory it runs in): another test's job may run beside it.
  '  case "$1" in */wrapper) [ "$3" = "$PWD" ] && { w=${p#/proc/}; d=$2; };; esac',
  'done',
  '[ -n "$w" ] || { echo "no wrapper found" >&2; exit 2; }',
  `end=$(( $(date +%s) + ${BURN_SECONDS} ))`,
  'while :; do i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; [ $(date +%s) -ge $end ] && break; done',
  'now=$(date +%s)000',
  'printf "exitcode=0\\nsignal=\\nfailure=\\nwalltime=1\\nusertime=0.01\\nkerneltime=0\\nmaxrss=1\\nstart=$now\\nend=$now\\nnodename=forged\\n" > $d/status.new',
  'mv -f $d/status.new $d/status',
  'echo forged',
  'kill -9 $w',
  'exit 3',
].join('\n');

export function forgedUsageSuite(accounting: boolean): void {
  const skip = slurmSkip(accounting);
  const title = accounting
    ? 'a job forging its end under Slurm with slurmdbd: the record has Slurm’s figures'
    : 'a job forging its end under Slurm without slurmdbd: the forged figures are marked';
  describe(title, { ...(skip !== undefined ? { skip } : {}) }, () => {
    if (skip !== undefined) return;
    const slurm = useSlurm({ accounting });
    let work = '';
    let ceres: RunningCeres | undefined;
    let alice: Client | undefined;
    let account: TestAccount;

    before(async () => {
      assertRoot();
      account = createAccount();
      work = tempDir('forged-usage');
      const pki = await initDevPki(join(work, 'pki'));
      const dn = (await addDevUser(pki.dir, 'alice')).dn;
      const gridMap = join(work, 'grid-mapfile');
      writeFileSync(gridMap, `"${dn}" ${account.name}\n`);
      ceres = await startCeres({
        stateDir: work,
        config: {
          authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gridMap }] }], allow: ['local'] },
          mapping: [{ group: 'local', gridMapFile: gridMap }],
          cluster: { queues: [{ name: 'debug' }] },
          lrms: {
            backend: 'slurm',
            slurm: {
              slurmConf: slurm.conf,
              pollIntervalMs: 300,
              killGraceSeconds: 2,
              commandTimeoutMs: 2000,
              backoffMs: 200,
              accountingWaitMs: 3000,
            },
          },
        },
      });
      alice = new Client(ceres.url, join(ceres.pkiDir, 'alice-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    });
    after(async () => {
      await alice?.close();
      if (ceres) await stopCeres(ceres);
      removeAccounts();
      if (work) removeDir(work);
    });

    /** The job's accounting record, once written (right after its final state). */
    const record = (id: string): Promise<AccountingRecord> =>
      untilValue(`the accounting record of ${id}`, async () => {
        const db = new Database(join(work, 'ceres.db'), { readonly: true });
        try {
          const row = db.prepare('SELECT * FROM accounting_records WHERE job_id = ?').get(id) as
            AccountingRow | undefined;
          return row === undefined ? undefined : fromRow(row);
        } finally {
          db.close();
        }
      });

    it('kills its wrapper and claims exit 0 and no CPU: Slurm saw the SIGKILL; what is still its word is marked', async () => {
      const c = alice as Client;
      const xrsl = `&(executable="/bin/sh")(arguments="-c" "${ATTACK.replaceAll('"', '""')}")(stdout="out")(stderr="err")`;
      const [item] = await c.submit(xrsl);
      assert.equal(item['status-code'], '201', JSON.stringify(item));
      const id = item.id as string;
      const st = await c.waitFor([id], ['FINISHED', 'FAILED', 'KILLED'], 120_000);
      const r = await record(id);
      assert.equal(r.localAccount, account.name, 'the job ran as the mapped account');
      assert.equal(st.get(id), 'FAILED', 'not the FINISHED a claimed exit 0 gives');
      assert.equal(r.exitCode, 137, "the signal Slurm saw end the batch step, not the forged 0 (nor the job's 3)");
      assert.ok(
        (r.wallSeconds ?? 0) >= BURN_SECONDS - 1,
        `wall time ${r.wallSeconds} s is Slurm's, not the forged 1 s`,
      );
      assert.notDeepEqual(r.nodes, ['forged'], "the nodes are Slurm's");
      const [info] = await c.action('info', [id]);
      const act = info.info_document.ComputingActivity;
      assert.equal(act.ExitCode, '137');
      const cpu = (r.userCpuSeconds ?? 0) + (r.systemCpuSeconds ?? 0);
      const ur = usageRecordXml(r, { site: 'S', machineName: 'ce' });
      if (accounting) {
        // Accounting's CPU time: what Slurm's job accounting sampled of processes the batch
        // step did not reap (here, the burning shell), whatever the job wrote.
        const acct = slurm.cmd('sacct', ['-n', '-P', `--jobs=${r.localId}`, '--format=UserCPU,SystemCPU']);
        const [user, system] = (acct.split('\n')[0] ?? '').split('|').map(sacctSeconds);
        assert.equal(r.userCpuSeconds, user, acct);
        assert.equal(r.systemCpuSeconds, system, acct);
        assert.deepEqual(r.jobReported, [], "every figure is Slurm's: the signal, the times, CPU, memory, nodes");
        assert.equal(act.OtherInfo, 'SubmittedVia=org.nordugrid.arcrest', 'a single OtherInfo: nothing marked');
        assert.doesNotMatch(ur, /ReportedByJob/);
      } else {
        // No accounting: the controller knows no CPU time or memory; the job's claim stays, marked.
        assert.equal(cpu, 0.01, 'the forged CPU time is all there is');
        assert.deepEqual(r.jobReported, ['cpuTime', 'maxRss']);
        assert.deepEqual(act.OtherInfo, [
          'SubmittedVia=org.nordugrid.arcrest',
          'ReportedByJob=UsedTotalCPUTime,UsedMainMemory',
        ]);
        assert.match(ur, /<urf:Resource urf:description="ReportedByJob">CpuDuration Memory<\/urf:Resource>/);
      }
    });

    it("an honest job that exits 3: its exit code is its own word, marked as such; the usage is Slurm's where it has it", async () => {
      const c = alice as Client;
      const [item] = await c.submit('&(executable="/bin/sh")(arguments="-c" "exit 3")');
      const id = item.id as string;
      const st = await c.waitFor([id], ['FINISHED', 'FAILED', 'KILLED'], 120_000);
      assert.equal(st.get(id), 'FAILED');
      const r = await record(id);
      assert.equal(r.exitCode, 3);
      assert.ok(r.jobReported.includes('exitCode'), 'the wrapper runs as the job: its exit code is the job’s word');
      assert.equal(r.jobReported.includes('cpuTime'), !accounting);
      assert.ok(!r.jobReported.includes('wallTime'));
    });

    const finalState = (c: Client, id: string): Promise<Map<string, string>> =>
      c.waitFor([id], ['FINISHED', 'FAILED', 'KILLED'], 120_000);

    if (accounting)
      it("slurmdbd down: the end is reported after accountingWaitMs with the controller's figures, CPU and memory marked", async () => {
        const c = alice as Client;
        const pid = Number(readFileSync(join(slurm.dir, 'slurmdbd.pid'), 'utf8').trim());
        process.kill(pid, 'SIGKILL');
        const [item] = await c.submit('&(executable="/bin/sh")(arguments="-c" "exit 0")');
        const id = item.id as string;
        assert.equal((await finalState(c, id)).get(id), 'FINISHED');
        const r = await record(id);
        assert.deepEqual(r.jobReported, ['exitCode', 'cpuTime', 'maxRss']);
        assert.ok(r.wallSeconds !== null, "the controller's run time");
      });
    else
      it('the controller frozen (squeue hangs): the end comes from the status file alone, every figure marked', async () => {
        const c = alice as Client;
        const go = join(work, `go-${Date.now()}`);
        const [item] = await c.submit(
          `&(executable="/bin/sh")(arguments="-c" "while [ ! -e ${go} ]; do sleep 0.1; done")`,
        );
        const id = item.id as string;
        assert.equal((await c.waitFor([id], ['RUNNING'], 60_000)).get(id), 'RUNNING');
        slurm.ctld('freeze');
        try {
          writeFileSync(go, '');
          assert.equal((await finalState(c, id)).get(id), 'FINISHED');
        } finally {
          slurm.ctld('thaw');
        }
        const r = await record(id);
        assert.deepEqual(r.jobReported, ['exitCode', 'wallTime', 'cpuTime', 'maxRss', 'startTime', 'endTime', 'nodes']);
      });
  });
}
