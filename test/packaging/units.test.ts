// The two systemd units (docs/operations.md, "The systemd units"): ceres-mapping.service
// runs the service as root confined to the capabilities it uses, ceres.service as a
// service user. Both pass `systemd-analyze verify` and `systemd-analyze security`; the
// mapping unit's command line, run as root in the environment systemd gives it and under
// its capability bounding set, runs a job as a mapped account end to end, and fails to
// with any of the file capabilities taken away (each is used). The plain unit's command
// line under an ordinary user refuses a mapping and starts without one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { fakeJwt } from '../delegations/fixture.js';
import { Client, removeDir, tempDir } from '../helpers/service.js';
import { untilValue } from '../helpers/poll.js';
import { assertRoot, createAccount, removeAccounts, skipUnlessRoot } from '../helpers/local-accounts.js';
import type { TestAccount } from '../helpers/local-accounts.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const UNITS = join(ROOT, 'packaging', 'systemd');
const MAPPING = 'ceres-mapping.service';
const PLAIN = 'ceres.service';
/** What the mapping unit's bounding set must be: each capability is justified in the unit and in docs/operations.md. */
const CAPS = [
  'CAP_SETUID',
  'CAP_SETGID',
  'CAP_CHOWN',
  'CAP_FOWNER',
  'CAP_DAC_OVERRIDE',
  'CAP_KILL',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_ADMIN',
];
/** The PATH systemd gives a service (Debian's build); nothing else of the caller's environment. */
const SYSTEMD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

const unitText = (name: string): string => readFileSync(join(UNITS, name), 'utf8');
/** Every value of `key=` in a unit, in order. */
const values = (unit: string, key: string): string[] =>
  [...unit.matchAll(new RegExp(`^${key}=(.*)$`, 'gm'))].map((m) => (m[1] ?? '').trim());

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : 1, stdout, stderr }),
    );
  });
}

/** The unit's ExecStart as an argv: the installed command replaced by this checkout's bin/ceres, the config by `config`. */
function commandLine(unit: string, config: string): string[] {
  const [exec] = values(unit, 'ExecStart');
  assert.ok(exec !== undefined, 'ExecStart');
  const argv = exec.split(/\s+/);
  assert.match(argv[0] ?? '', /\/ceres$/);
  const at = argv.indexOf('--config');
  assert.ok(at > 0 && argv[at + 1] !== undefined, 'ExecStart names the configuration');
  argv[0] = join(ROOT, 'bin', 'ceres');
  argv[at + 1] = config;
  return argv;
}

interface Checked {
  verify: string;
  /** `systemd-analyze security` lines by check name: true when passed. */
  checks: Map<string, boolean>;
  exposure: number;
}

/** Runs both systemd-analyze checks on `text` (written beside a runnable ExecStart). */
async function analyze(dir: string, name: string, text: string): Promise<Checked> {
  const file = join(dir, name);
  writeFileSync(file, text.replace(/^ExecStart=\S+/m, `ExecStart=${join(ROOT, 'bin', 'ceres')}`));
  const v = await run('systemd-analyze', ['verify', file]);
  const s = await run('systemd-analyze', ['security', '--offline=yes', file]);
  assert.equal(s.code, 0, s.stderr);
  const checks = new Map<string, boolean>();
  for (const m of s.stdout.matchAll(/^([✓✗])\s+(\S+)/gm)) checks.set(m[2] ?? '', m[1] === '✓');
  const exposure = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(s.stdout)?.[1]);
  return { verify: v.stderr + v.stdout, checks, exposure };
}

describe('systemd units: what they hold', () => {
  const mapping = unitText(MAPPING);
  const plain = unitText(PLAIN);

  it('the mapping unit runs as root with exactly the capabilities the service uses, each explained', () => {
    assert.deepEqual(values(mapping, 'User'), [], 'no User=: root');
    const set = values(mapping, 'CapabilityBoundingSet');
    assert.equal(set.length, 1);
    assert.deepEqual((set[0] ?? '').split(/\s+/).sort(), [...CAPS].sort());
    assert.deepEqual(values(mapping, 'AmbientCapabilities'), [], 'root needs no ambient capabilities');
    const docs = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    for (const c of CAPS) {
      assert.match(mapping, new RegExp(`^#.*\\b${c}\\b`, 'm'), `${c} is explained in the unit`);
      assert.match(docs, new RegExp(`\\| \`${c}\` \\|`), `${c} is explained in docs/operations.md`);
    }
    assert.doesNotMatch(mapping, /^CapabilityBoundingSet=.*CAP_DAC_READ_SEARCH/m, 'CAP_DAC_OVERRIDE covers it');
  });

  it('the mapping unit keeps what jobs need: the real /tmp, homes, namespaces, setuid programs, system calls', () => {
    assert.deepEqual(values(mapping, 'PrivateTmp'), ['no']);
    assert.deepEqual(values(mapping, 'ProtectHome'), ['no']);
    assert.deepEqual(values(mapping, 'NoNewPrivileges'), ['no']);
    assert.deepEqual(values(mapping, 'ProtectSystem'), ['full'], 'strict would make the jobs’ own paths read-only');
    assert.deepEqual(values(mapping, 'RestrictNamespaces'), [], 'the job wrapper makes mount namespaces');
    assert.deepEqual(values(mapping, 'StateDirectoryMode'), ['0711'], 'accounts pass the state directory');
    for (const f of values(mapping, 'SystemCallFilter'))
      assert.doesNotMatch(f, /@(mount|setuid|privileged|system-service|process|signal|chown)\b|setgroups|unshare/);
  });

  it('both units run the same command line, leave jobs running on stop and delegate cgroups', () => {
    for (const u of [mapping, plain]) {
      assert.match(u, /^ExecStart=\S+\/ceres serve --config \S+$/m);
      assert.deepEqual(values(u, 'KillMode'), ['process']);
      assert.deepEqual(values(u, 'Delegate'), ['yes']);
      assert.deepEqual(values(u, 'StateDirectory'), ['ceres']);
    }
    assert.deepEqual(values(mapping, 'ExecStart'), values(plain, 'ExecStart'));
    assert.deepEqual(values(plain, 'User'), ['ceres']);
    assert.deepEqual(values(plain, 'CapabilityBoundingSet'), ['CAP_NET_BIND_SERVICE']);
  });
});

describe('systemd units: systemd-analyze', () => {
  const dir = tempDir('units');
  let available = true;
  before(async () => {
    available = (await run('systemd-analyze', ['--version'])).code === 0;
  });
  after(() => removeDir(dir));

  /** Checks the mapping unit passes; a capability it must not have, or a setting it must keep, would fail them. */
  const MAPPING_PASSES = [
    'CapabilityBoundingSet=~CAP_SYS_PTRACE',
    'CapabilityBoundingSet=~CAP_SYS_RAWIO',
    'CapabilityBoundingSet=~CAP_SYS_MODULE',
    'CapabilityBoundingSet=~CAP_NET_ADMIN',
    'CapabilityBoundingSet=~CAP_SYS_(NICE|RESOURCE)',
    'CapabilityBoundingSet=~CAP_MKNOD',
    'ProtectKernelModules=',
    'ProtectKernelLogs=',
    'ProtectClock=',
    'RestrictSUIDSGID=',
  ];

  it('both units verify without a complaint', async (t) => {
    if (!available) return t.skip('systemd-analyze is not installed');
    for (const [name, text] of [
      [MAPPING, unitText(MAPPING)],
      [PLAIN, unitText(PLAIN)],
    ] as const) {
      const r = await analyze(dir, name, text);
      assert.doesNotMatch(r.verify, /\.service:/, `${name}: ${r.verify}`);
    }
  });

  it('a misspelt setting is reported by verify', async (t) => {
    if (!available) return t.skip('systemd-analyze is not installed');
    const typo = await analyze(dir, 'typo.service', unitText(MAPPING).replace(/^ProtectSystem=/m, 'ProtectSystems='));
    assert.match(typo.verify, /Unknown key 'ProtectSystems'/);
  });

  it('security: the mapping unit passes the checks of the capabilities and settings it keeps away', async (t) => {
    if (!available) return t.skip('systemd-analyze is not installed');
    const r = await analyze(dir, MAPPING, unitText(MAPPING));
    for (const c of MAPPING_PASSES) assert.equal(r.checks.get(c), true, c);
    assert.ok(r.exposure > 0 && r.exposure <= 6.5, `overall exposure ${r.exposure}`);
    const plain = await analyze(dir, PLAIN, unitText(PLAIN));
    assert.equal(plain.checks.get('CapabilityBoundingSet=~CAP_SET(UID|GID|PCAP)'), true);
    assert.equal(plain.checks.get('CapabilityBoundingSet=~CAP_SYS_ADMIN'), true);
    assert.ok(plain.exposure > 0 && plain.exposure <= 6.5, `overall exposure ${plain.exposure}`);
  });

  it('security: a mapping unit that gains ptrace, or loses its kernel protections, fails those checks', async (t) => {
    if (!available) return t.skip('systemd-analyze is not installed');
    const ptrace = await analyze(
      dir,
      'ptrace.service',
      unitText(MAPPING).replace(/^CapabilityBoundingSet=/m, 'CapabilityBoundingSet=CAP_SYS_PTRACE '),
    );
    assert.equal(ptrace.checks.get('CapabilityBoundingSet=~CAP_SYS_PTRACE'), false);
    const open = await analyze(
      dir,
      'open.service',
      unitText(MAPPING)
        .replace(/^ProtectKernelModules=yes$/m, '')
        .replace(/^RestrictSUIDSGID=yes$/m, ''),
    );
    assert.equal(open.checks.get('ProtectKernelModules='), false);
    assert.equal(open.checks.get('RestrictSUIDSGID='), false);
    const mapping = await analyze(dir, MAPPING, unitText(MAPPING));
    assert.ok(open.exposure > mapping.exposure, `${open.exposure} > ${mapping.exposure}`);
  });
});

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  readonly exited: Promise<number | null>;
}

/**
 * The unit's command line as systemd runs it: systemd's PATH and nothing else of this
 * process's environment, working directory /, `prefix` in front (setpriv: the bounding set,
 * the user). Resolves once the service URL is printed or the process ended.
 */
async function startAsUnit(unit: string, config: string, prefix: string[]): Promise<Started> {
  const argv = [...prefix, ...commandLine(unit, config)];
  const child = spawn(argv[0] ?? '', argv.slice(1), {
    cwd: '/',
    env: { PATH: SYSTEMD_PATH },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = await untilValue('the service URL or the end of the process', () =>
    Promise.resolve(/service URL (\S+)/.exec(out)?.[1] ?? (child.exitCode !== null ? '' : undefined)),
  );
  return { child, url, output: () => out, exited };
}

async function stop(s: Started | undefined): Promise<void> {
  if (s === undefined || s.child.exitCode !== null) return;
  s.child.kill('SIGTERM');
  await s.exited;
}

/** setpriv's bounding-set argument for `caps` (CAP_X names). */
const bounding = (caps: readonly string[]): string =>
  `--bounding-set=-all,${caps.map((c) => `+${c.replace(/^CAP_/, '').toLowerCase()}`).join(',')}`;

describe(
  'systemd units: the command lines, run as systemd would',
  { skip: skipUnlessRoot('running the units’ command lines as root and as an ordinary user') },
  () => {
    const dirs: string[] = [];
    const started: Started[] = [];
    let account: TestAccount;
    before(() => {
      assertRoot();
      account = createAccount();
    });
    after(async () => {
      for (const s of started) await stop(s);
      removeAccounts();
      for (const d of dirs) removeDir(d);
    });

    /** A state directory with the dev PKI, a user mapped to `account` by a grid-mapfile, and the configuration file. */
    async function site(
      withMapping: boolean,
      level = 'warn',
    ): Promise<{ config: string; stateDir: string; pki: string }> {
      const stateDir = tempDir('unit');
      dirs.push(stateDir);
      const pki = (await initDevPki(join(stateDir, 'pki'))).dir;
      const { dn } = await addDevUser(pki, 'alice');
      const gridMap = join(stateDir, 'grid-mapfile');
      writeFileSync(gridMap, `"${dn}" ${account.name}\n`);
      const config = join(stateDir, 'config.json');
      writeFileSync(
        config,
        JSON.stringify({
          listen: '127.0.0.1:0',
          stateDir,
          log: { level },
          authorization: { groups: [{ name: 'local', match: [{ gridMapFile: gridMap }] }], allow: ['local'] },
          ...(withMapping ? { mapping: [{ group: 'local', gridMapFile: gridMap }] } : {}),
        }),
      );
      return { config, stateDir, pki };
    }

    /** The mapping unit's command line under `caps`; a job with an upload, run as the account: its end state and output. */
    async function mappedJob(caps: readonly string[]): Promise<{ state: string; out: string }> {
      const { config, pki } = await site(true);
      const s = await startAsUnit(unitText(MAPPING), config, ['setpriv', bounding(caps), '--inh-caps=-all', '--']);
      started.push(s);
      if (s.url === '') return { state: 'not started', out: s.output() };
      const alice = new Client(s.url, join(pki, 'alice-proxy.pem'), join(pki, 'ca.pem'));
      try {
        // A delegated token: its copy for the job is given to the account and set to 0600.
        const d = await alice.req('POST', '/rest/1.1/delegations?action=new&type=jwt', undefined, {
          'x-delegation': `bearer ${fakeJwt({ sub: 'alice' })}`,
        });
        assert.equal(d.status, 201, d.text);
        const delegation = String(d.headers.location).split('/').pop() as string;
        const [job] = await alice.submit(
          '&(executable="/bin/sh")(arguments="-c" "id -un; cat in.txt; test -r ""$BEARER_TOKEN_FILE"" && echo token")' +
            `(stdout="out")(inputfiles=("in.txt" ""))(outputfiles=("out" ""))(delegationid="${delegation}")`,
        );
        const put = await alice.req('PUT', `/rest/1.1/jobs/${job.id}/session/in.txt`, 'uploaded\n', {
          'content-type': 'application/octet-stream',
        });
        const [state = ''] = (await alice.waitFor([job.id], ['FINISHED', 'FAILED'], 90_000)).values();
        const r = await alice.req('GET', `/rest/1.1/jobs/${job.id}/session/out`, undefined, { accept: '*/*' });
        return { state, out: put.status === 200 && r.status === 200 ? r.text : `PUT ${put.status}, GET ${r.status}` };
      } finally {
        await alice.close();
        await stop(s);
      }
    }

    it('the mapping unit, root under its bounding set: a job with an upload runs as its mapped account', async () => {
      const r = await mappedJob(CAPS);
      assert.deepEqual(r, { state: 'FINISHED', out: `${account.name}\nuploaded\ntoken\n` });
    });

    for (const missing of ['CAP_DAC_OVERRIDE', 'CAP_FOWNER', 'CAP_CHOWN']) {
      it(`without ${missing} the same job does not get through: the capability is used`, async () => {
        const r = await mappedJob(CAPS.filter((c) => c !== missing));
        assert.notDeepEqual(r, { state: 'FINISHED', out: `${account.name}\nuploaded\ntoken\n` }, missing);
      });
    }

    /** `argv` as root under the mapping unit's bounding set without `missing`: exit code and output. */
    const bounded = (argv: string[], missing?: string): Promise<{ code: number; stdout: string; stderr: string }> =>
      run('setpriv', [bounding(CAPS.filter((c) => c !== missing)), '--inh-caps=-all', '--', ...argv]);

    it('Slurm submission: runuser switches to the account under the bounding set, not without CAP_SETUID', async () => {
      const ok = await bounded(['runuser', '-u', account.name, '--', 'id', '-un']);
      assert.deepEqual([ok.code, ok.stdout], [0, `${account.name}\n`], ok.stderr);
      const no = await bounded(['runuser', '-u', account.name, '--', 'id', '-un'], 'CAP_SETUID');
      assert.notEqual(no.code, 0);
      assert.notEqual(no.stdout, `${account.name}\n`);
    });

    it('the process scan reads the mark in a job process of the account, not without CAP_SYS_ADMIN', async () => {
      // A process of the account carrying a job mark, as the wrapper leaves one; the scan
      // reads /proc/<pid>/environ of another uid, which the kernel allows root with
      // CAP_DAC_OVERRIDE and CAP_SYS_ADMIN (or CAP_SYS_PTRACE, which the unit leaves out).
      const mark = `unit-${process.pid}`;
      const job = spawn('runuser', ['-u', account.name, '--', 'env', `CERES_JOB_MARK=${mark}`, 'sleep', '120'], {
        stdio: 'ignore',
      });
      let pid: string | undefined;
      try {
        pid = await untilValue('the job process', () => {
          const r = spawnSync('pgrep', ['-P', String(job.pid), '-u', String(account.uid)], { encoding: 'utf8' });
          return Promise.resolve(/^\d+/.exec(r.stdout)?.[0]);
        });
        const read = (missing?: string): Promise<{ code: number; stdout: string; stderr: string }> =>
          bounded(['cat', `/proc/${pid}/environ`], missing);
        assert.match((await read()).stdout, new RegExp(`CERES_JOB_MARK=${mark}`));
        const no = await read('CAP_SYS_ADMIN');
        assert.notEqual(no.code, 0);
        assert.match(no.stderr, /Permission denied/);
      } finally {
        if (pid !== undefined) process.kill(Number(pid), 'SIGKILL');
        job.kill();
      }
    });

    /** The plain unit's command line as an ordinary user (the unit's `ceres`: the test account). */
    async function asServiceUser(withMapping: boolean, level = 'warn'): Promise<Started> {
      const { config, stateDir } = await site(withMapping, level);
      execFileSync('chown', ['-R', `${account.uid}:${account.gid}`, stateDir]);
      const s = await startAsUnit(unitText(PLAIN), config, [
        'setpriv',
        `--reuid=${account.uid}`,
        `--regid=${account.gid}`,
        '--init-groups',
        bounding(['CAP_NET_BIND_SERVICE']),
        '--inh-caps=-all',
        '--',
      ]);
      started.push(s);
      return s;
    }

    it('the plain unit as a service user refuses a mapping, naming root and the way out', async () => {
      const s = await asServiceUser(true);
      assert.equal(s.url, '', s.output());
      assert.equal(await s.exited, 1);
      assert.match(s.output(), /not root/);
      assert.match(s.output(), /Run the service as root, or remove the mapping/);
    });

    it('both units reload with `systemctl reload`: ExecReload sends SIGHUP to the main process only', async () => {
      const reloads = [unitText(PLAIN), unitText(MAPPING)].map((u) => values(u, 'ExecReload'));
      assert.deepEqual(reloads[0], reloads[1], 'the same reload in both units');
      const [cmd] = reloads[0] ?? [];
      assert.ok(cmd !== undefined, 'ExecReload');
      const s = await asServiceUser(false, 'info');
      assert.match(s.url, /^https:/, s.output());
      // As systemd runs it: $MAINPID is the service's pid, the command runs as root.
      const argv = cmd.replace('$MAINPID', String(s.child.pid)).split(/\s+/);
      execFileSync(argv[0] ?? '', argv.slice(1), { env: { PATH: SYSTEMD_PATH } });
      await untilValue('the reload logged', () =>
        Promise.resolve(/configuration reloaded/.test(s.output()) ? true : undefined),
      );
      assert.equal(s.child.exitCode, null, 'the service still runs after the reload');
      await stop(s);
    });

    it('the plain unit as a service user starts without a mapping', async () => {
      const s = await asServiceUser(false);
      assert.match(s.url, /^https:\/\/127\.0\.0\.1:\d+\/arex$/, s.output());
      await stop(s);
      assert.equal(await s.exited, 0);
    });
  },
);
