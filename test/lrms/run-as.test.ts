// Jobs of the fork backend under local accounts (BatchJobSpec.localAccount), with real
// accounts made for the test: the job runs as its account with its groups and no way
// back to root; the wrapper's files stay out of its reach, so its exit code is the true
// one whatever it does to them; a link it plants never makes root write through it;
// cancel still kills all its processes; an account that cannot be used fails the
// submission and nothing runs (never as the service user).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, lchown, mkdir, mkdtemp, open, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForkBackend } from '../../src/lrms/fork/fork-backend.js';
import { jobScript } from '../../src/lrms/core/job-script.js';
import type { BatchJobSpec } from '../../src/lrms/backend.js';
import { CeError } from '../../src/errors/ce-error.js';
import { pidIn, until } from './backend.case.js';
import { AccountJobs } from './account-jobs.js';
import { processAlive as alive } from '../helpers/service.js';
import {
  assertRoot,
  createAccount,
  createGroup,
  removeAccounts,
  skipUnlessRoot,
  type TestAccount,
} from '../helpers/local-accounts.js';

describe(
  'fork backend: jobs run as their local account',
  { skip: skipUnlessRoot('running jobs as local accounts') },
  () => {
    let root = '';
    let a: TestAccount;
    let b: TestAccount;
    let extra: { name: string; gid: number };
    let jobs: AccountJobs;
    let backend: ForkBackend;
    const started: number[] = [];

    before(async () => {
      assertRoot();
      a = createAccount();
      b = createAccount();
      extra = createGroup([a.name]);
      // Traversable by the accounts, like the state directory (docs/security.md).
      root = await mkdtemp(join(tmpdir(), 'ceres-runas-'));
      await chmod(root, 0o711);
      jobs = await AccountJobs.create(root, 'runas');
      backend = jobs.backend;
    });
    after(async () => {
      for (const p of started) if (alive(p)) process.kill(p, 'SIGKILL');
      await backend?.close();
      removeAccounts();
      if (root) await rm(root, { recursive: true, force: true });
    });

    /** A spec running `script` as `account` in a session directory of `owner` (./account-jobs.ts). */
    const spec = (
      owner: TestAccount,
      script: string,
      account: string | null = owner.name,
      more: Partial<BatchJobSpec> = {},
    ): Promise<BatchJobSpec> => jobs.spec(owner, script, { account, more });
    const run = (s: BatchJobSpec): ReturnType<AccountJobs['run']> => jobs.run(s);

    it('runs the job as the account, with its groups, and no privilege left', async () => {
      const { r, out, err } = await run(
        await spec(
          a,
          'id -un; id -u; id -g; id -G; grep -E "^(Uid|Gid|CapPrm|CapEff|CapBnd)" /proc/self/status; echo "USER=$USER"; touch made',
        ),
      );
      assert.equal(r.exitCode, 0, err);
      const lines = out.split('\n');
      assert.equal(lines[0], a.name);
      assert.equal(Number(lines[1]), a.uid);
      assert.equal(Number(lines[2]), a.gid);
      const gids = (lines[3] ?? '').split(' ').map(Number);
      assert.ok(gids.includes(extra.gid), `the supplementary group is set: ${lines[3]}`);
      assert.ok(!gids.includes(0), `no group of root is kept: ${lines[3]}`);
      assert.match(
        out,
        new RegExp(`^Uid:\\s+${a.uid}\\s+${a.uid}\\s+${a.uid}\\s+${a.uid}$`, 'm'),
        'real, effective, saved and fs uid are the account',
      );
      assert.match(out, new RegExp(`^Gid:\\s+${a.gid}\\s+${a.gid}\\s+${a.gid}\\s+${a.gid}$`, 'm'));
      assert.match(out, /^CapPrm:\s+0+$/m, 'no permitted capabilities');
      assert.match(out, /^CapEff:\s+0+$/m, 'no effective capabilities');
      assert.match(out, new RegExp(`^USER=${a.name}$`, 'm'));
      const made = statSync(join(root, 'sessions', `s${jobs.count}`, 'made'));
      assert.equal(made.uid, a.uid, 'files the job makes belong to the account');
      // The stdout file is opened as the account too.
      assert.equal(statSync(join(root, 'sessions', `s${jobs.count}`, 'out')).uid, a.uid);
    });

    it("does not inherit a descriptor the wrapper's parent left open (a file only root may read)", async () => {
      const secret = join(root, 'root-secret.txt');
      await writeFile(secret, 'root secret\n', { mode: 0o600 });
      const s = await spec(a, 'cat <&5; ls -l /proc/$$/fd');
      await mkdir(s.lrmsDir, { recursive: true, mode: 0o700 });
      await writeFile(join(s.lrmsDir, 'job.sh'), jobScript(s));
      const leaked = await open(secret, 'r');
      try {
        // As a parent that forgot close-on-exec would: the descriptor is the wrapper's fd 5.
        const args = [
          s.lrmsDir,
          s.sessionDir,
          '',
          'out',
          'err',
          '0',
          '0',
          '0',
          '0',
          '1',
          '1000',
          '',
          'mark',
          `${a.uid}:${a.gid}:${a.gid}`,
          '',
        ];
        const r = spawnSync(backend.wrapper.path, args, {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore', 'ignore', 'ignore', leaked.fd],
        });
        assert.match(r.stdout, /^ok \d+/, r.stdout);
      } finally {
        await leaked.close();
      }
      await until('the job to end', () => existsSync(join(s.lrmsDir, 'status')));
      const out = readFileSync(join(s.sessionDir, 'out'), 'utf8');
      assert.doesNotMatch(out, /root secret/, 'the job could not read through the descriptor');
      assert.match(readFileSync(join(s.sessionDir, 'err'), 'utf8'), /Bad file descriptor/);
      const extra = [...out.matchAll(/ (\d+) -> (.*)$/gm)].filter((m) => !['0', '1', '2'].includes(m[1] ?? ''));
      assert.ok(extra.every((m) => (m[2] ?? '').endsWith('/job.sh')) && extra.length <= 1, out);
    });

    it("cannot read another account's session, its own wrapper files, or the backend's directory", async () => {
      const other = await spec(b, 'echo secret > secret.txt');
      assert.equal((await run(other)).r.exitCode, 0);
      const s = await spec(a, '');
      const script = [
        `cat ${join(other.sessionDir, 'secret.txt')}`,
        `ls ${other.sessionDir}`,
        `ls ${s.lrmsDir}`,
        `cat ${join(s.lrmsDir, 'job.sh')}`,
        `ls ${join(root, 'lrms')}`,
        `echo x > ${join(other.sessionDir, 'planted')}`,
        'exit 0',
      ].join('\n');
      const { r, err } = await run({ ...s, arguments: ['-c', script] });
      assert.equal(r.exitCode, 0);
      const denied = err.split('\n').filter((l) => /Permission denied/.test(l));
      assert.equal(denied.length, 6, `every attempt is refused with "Permission denied":\n${err}`);
      assert.ok(!existsSync(join(other.sessionDir, 'planted')));
    });

    it("a hostile job cannot forge its exit status or touch another job's wrapper files", async () => {
      const victim = await spec(b, 'exit 3');
      const victimResult = await run(victim);
      assert.equal(victimResult.r.exitCode, 3);
      const s = await spec(a, '');
      const forge =
        'exitcode=0\nsignal=\nfailure=\nwalltime=1\nusertime=0\nkerneltime=0\nmaxrss=0\nstart=1\nend=2\nnodename=forged\n';
      const script = [
        `printf '${forge.replaceAll('\n', '\\n')}' > ${join(s.lrmsDir, 'status')}`,
        `mv ${s.lrmsDir} ${s.lrmsDir}.gone`,
        `ln -s /tmp ${join(s.lrmsDir, 'diag')}`,
        `printf 'exitcode=0\\n' > ${join(victim.lrmsDir, 'status')}`,
        // The wrapper runs as root: the job cannot signal it away.
        'kill -9 $PPID',
        'exit 7',
      ].join('\n');
      const { r, err } = await run({ ...s, arguments: ['-c', script] });
      assert.equal(r.exitCode, 7, `the service sees the true exit code (stderr: ${err})`);
      assert.notEqual(r.nodes[0], 'forged');
      assert.equal(r.failureReason, undefined);
      assert.equal(err.split('\n').filter((l) => /Permission denied|Operation not permitted/.test(l)).length, 5, err);
      assert.match(
        readFileSync(join(victim.lrmsDir, 'status'), 'utf8'),
        /^exitcode=3$/m,
        "the other job's status is untouched",
      );
    });

    it('opens stdout as the account: a link planted in its place never makes root write through it', async () => {
      const target = join(root, 'root-only.txt');
      await writeFile(target, 'keep\n', { mode: 0o600 });
      const s = await spec(a, 'echo written');
      await symlink(target, join(s.sessionDir, 'out'));
      await lchown(join(s.sessionDir, 'out'), a.uid, a.gid);
      const { r } = await run(s);
      assert.equal(readFileSync(target, 'utf8'), 'keep\n');
      assert.match(r.failureReason ?? '', /cannot open the stdout file out: Permission denied/);
      assert.equal(readFileSync(target, 'utf8'), 'keep\n');
    });

    for (const cgroups of ['auto', 'off'] as const) {
      it(`cancel kills every process of the job, a daemon in its own session included (cgroups ${cgroups})`, async (t) => {
        const be =
          cgroups === 'auto'
            ? backend
            : await ForkBackend.create({
                workDir: join(root, 'lrms', 'fork-scan'),
                wrapper: 'c',
                cgroups,
                killGraceSeconds: 1,
                pollIntervalMs: 100,
              });
        if (be !== backend) {
          t.after(() => be.close());
          be.onUpdate((id, u) => {
            if (u.kind === 'final') jobs.finals.set(id, u.result);
          });
        }
        const s = await spec(
          a,
          "setsid sh -c 'echo $$ > d.pid; exec sleep 1000' & echo $$ > main.pid; while :; do sleep 0.05; done",
        );
        const id = await be.submit(s);
        await until(
          'the daemon',
          () => pidIn(join(s.sessionDir, 'd.pid')) > 0 && pidIn(join(s.sessionDir, 'main.pid')) > 0,
        );
        const pids = [pidIn(join(s.sessionDir, 'd.pid')), pidIn(join(s.sessionDir, 'main.pid'))];
        started.push(...pids);
        for (const p of pids) assert.equal(statSync(`/proc/${p}`).uid, a.uid, 'the processes run as the account');
        assert.equal(await be.cancel(id), true);
        await until('the final update', () => jobs.finals.has(id));
        assert.equal(jobs.finals.get(id)?.failureReason, 'cancelled');
        await until('no process of the job is left', () => pids.every((p) => !alive(p)), 10_000);
      });
    }

    it('release() (clean) kills a daemon of the account that outlived its job', async () => {
      const s = await spec(
        a,
        "setsid sh -c 'echo $$ > d.pid; exec sleep 1000' & while [ ! -s d.pid ]; do sleep 0.02; done; exit 0",
      );
      const { r } = await run(s);
      assert.equal(r.exitCode, 0);
      const d = pidIn(join(s.sessionDir, 'd.pid'));
      started.push(d);
      // The wrapper kills what is left of the job when it ends; release() is the net for the rest.
      await backend.release({ jobId: s.jobId, lrmsDir: s.lrmsDir });
      await until('the daemon to be gone', () => !alive(d), 10_000);
    });

    for (const [what, account, code] of [
      ['an account that does not exist', 'nosuchacct-ceres', 'CE_ERR_ACCOUNT_UNKNOWN'],
      ['a name that is not an account name', '../root', 'CE_ERR_ACCOUNT_UNKNOWN'],
      ['root', 'root', 'CE_ERR_ACCOUNT_REFUSED'],
    ] as const) {
      it(`${what}: the submission fails with ${code}, and nothing runs (not as the service user either)`, async () => {
        const s = await spec(a, `touch ${join(root, `ran-${jobs.count + 1}`)}`, account);
        await assert.rejects(
          backend.submit(s),
          (e: unknown) => e instanceof CeError && e.code === code && e.message.includes(account),
        );
        assert.ok(!existsSync(join(root, `ran-${jobs.count}`)), 'the job did not run');
        assert.ok(!existsSync(join(s.lrmsDir, 'pid')), 'no wrapper claimed the job');
      });
    }

    for (const [what, cred] of [
      ['uid 0', '0:0:0'],
      ['a malformed CRED', 'x:1:2'],
      ['a group list that is not numbers', '1000:1000:1,abc'],
    ] as const) {
      it(`the C wrapper itself refuses ${what} and starts nothing`, async () => {
        const s = await spec(a, 'true');
        await mkdir(s.lrmsDir, { recursive: true, mode: 0o700 });
        await writeFile(join(s.lrmsDir, 'job.sh'), `#!/bin/sh\ntouch ${join(root, 'ran-cred')}\n`);
        const args = [s.lrmsDir, s.sessionDir, '', 'out', 'err', '0', '0', '0', '0', '1', '1000', '', 'mark', cred, ''];
        const r = spawnSync(backend.wrapper.path, args, { encoding: 'utf8' });
        assert.match(r.stdout, /^error invalid account credentials/, r.stdout + r.stderr);
        assert.ok(!existsSync(join(s.lrmsDir, 'pid')), 'the wrapper did not claim the job');
        assert.ok(!existsSync(join(root, 'ran-cred')), 'nothing ran');
      });
    }

    it('the sh wrapper refuses to run a job as an account (it cannot switch safely)', async (t) => {
      const sh = await ForkBackend.create({ workDir: join(root, 'lrms', 'fork-sh'), wrapper: 'sh' });
      t.after(() => sh.close());
      const s = await spec(a, `touch ${join(root, 'ran-sh')}`);
      await assert.rejects(
        sh.submit(s),
        (e: unknown) => e instanceof CeError && e.code === 'CE_ERR_ACCOUNT_SWITCH_IMPOSSIBLE',
      );
      assert.ok(!existsSync(join(root, 'ran-sh')));
    });

    it('without an account the job runs as the service user, as before', async () => {
      const { r, out } = await run(await spec(a, 'id -u', null));
      assert.equal(r.exitCode, 0);
      assert.equal(Number(out.trim()), process.geteuid?.());
    });
  },
);
