// `ceres trace URL` (a real child process) against the real service over real TLS, with real
// proxies and a real token: a whole trace passes (proxy, token, --json), and each failure names
// its step, the reason and a remedy: an untrusted CA, an expired VOMS proxy (voms-proxy-fake), a
// proxy the service does not accept (401), a caller the authorization refuses (403), no such
// queue, a job that fails (its exit code and errors), a service that stops answering (frozen:
// the step's timeout) and a service killed mid-trace (connection refused at the step it was
// in). Two services, started once: one for the trace's own checks, one to freeze and kill.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueDevToken } from '../../src/auth/token/dev-issuer.js';
import { addDevUser, initDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { STEPS } from '../../src/client/trace/step.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { runVomsProxyFake, serverFromCaFiles, vomsSkip } from '../auth/voms/voms-fixture.js';

const MAIN = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));
const ALL_SCOPES = 'compute.create compute.read compute.modify compute.cancel';
/** A hard bound on one trace run in these tests: a trace that hangs fails the test, it does not stall it. */
const RUN_LIMIT_MS = 150_000;

interface TraceRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `ceres trace` with only the environment given (no proxy or token of the machine leaks in). */
function trace(
  args: readonly string[],
  env: Record<string, string>,
  onLine?: (line: string, pid: number) => void,
): Promise<TraceRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, 'trace', ...args], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let partial = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      partial += d.toString();
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) onLine?.(l, child.pid as number);
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ceres trace did not end within ${RUN_LIMIT_MS} ms\n${stdout}\n${stderr}`));
    }, RUN_LIMIT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The line of one step in the text output. */
function stepLine(out: string, step: string): string | undefined {
  return out.split('\n').find((l) => new RegExp(`^(ok|FAILED|skipped)\\s+${step}\\s`).test(l));
}

describe('ceres trace (real service, real credentials)', () => {
  let work: string;
  let pki: DevPki;
  let ceres: RunningCeres;
  let victim: RunningCeres;
  let token: string;
  let refusedProxy: string;
  const base = (): Record<string, string> => ({ X509_USER_PROXY: pki.files.userProxy });
  const caArgs = (): string[] => ['--ca-dir', pki.files.certificatesDir];

  before(async () => {
    work = tempDir('trace');
    pki = await initDevPki(join(work, 'state', 'pki'));
    refusedProxy = (await addDevUser(pki.dir, 'refused')).proxyFile;
    token = await issueDevToken(pki.dir, { sub: 'trace-user', scope: ALL_SCOPES });
    const issuer = (JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { iss: string })
      .iss;
    // Scripts the jobs' runtime environments source: one fails the job, one holds it a while.
    const failScript = join(work, 'fail.sh');
    writeFileSync(failScript, 'echo "the trace test refuses this job" >&2\nexit 3\n', { mode: 0o644 });
    const slowScript = join(work, 'slow.sh');
    writeFileSync(slowScript, 'sleep 8\n', { mode: 0o644 });
    // Outlasts any --timeout the tests give; the trace kills it.
    const longScript = join(work, 'long.sh');
    writeFileSync(longScript, 'sleep 120\n', { mode: 0o644 });
    const rtes = [
      { name: 'TRACE/FAIL', script: failScript },
      { name: 'TRACE/SLOW', script: slowScript },
      { name: 'TRACE/LONG', script: longScript },
    ];
    [ceres, victim] = await Promise.all([
      startCeres({
        stateDir: join(work, 'state'),
        config: {
          cluster: { runtimeEnvironments: rtes },
          authorization: {
            groups: [{ name: 'tracers', match: [{ subject: pki.userDn }, { token: { issuer } }] }],
            allow: ['tracers'],
          },
        },
      }),
      startCeres({ stateDir: join(work, 'victim'), config: { cluster: { runtimeEnvironments: rtes } } }),
    ]);
  });

  after(async () => {
    for (const c of [ceres, victim]) {
      // The victim was killed by a signal: no exit code, and no 'exit' event to wait for.
      if (c === undefined || c.child.signalCode !== null) continue;
      c.child.kill('SIGCONT');
      await stopCeres(c);
    }
    removeDir(work);
  });

  it('passes every step with a proxy: the job runs, its output is checked, and nothing is left on the CE', async () => {
    const r = await trace([ceres.url, ...caArgs()], base());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    for (const step of STEPS) assert.match(stepLine(r.stdout, step) ?? '', /^ok\s/, `${step}\n${r.stdout}`);
    assert.match(stepLine(r.stdout, 'credentials') ?? '', new RegExp(`of ${pki.userDn.replace(/[/=]/g, '.')}`));
    assert.match(stepLine(r.stdout, 'tls') ?? '', /trusted in .*names 127\.0\.0\.1/);
    assert.match(stepLine(r.stdout, 'dry-run') ?? '', /ended FAILED: Job has dryrun requested/);
    assert.match(stepLine(r.stdout, 'run') ?? '', /FINISHED with exit code 0/);
    assert.match(r.stdout, /^\s+\+\S+ m?s\s+FINISHED$/m, 'the state changes are printed with their times');
    assert.match(r.stdout, /^trace passed: 13 steps in /m);
    // No secret in the output: not the proxy's key, nor any of its base64.
    const key = /-----BEGIN (?:RSA )?PRIVATE KEY-----\n([A-Za-z0-9+/]{40})/.exec(
      readFileSync(pki.files.userProxy, 'utf8'),
    )?.[1];
    assert.ok(key !== undefined);
    assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key));
    // Cleaned (a clean is queued: 202): the CE soon lists no job and no delegation of the user.
    const c = Client.forUser(ceres);
    try {
      await until(
        async () => ((await c.req('GET', '/rest/1.1/jobs')).json().job ?? []).length === 0,
        'the jobs cleaned',
      );
      assert.deepEqual((await c.req('GET', '/rest/1.1/delegations')).json().delegation ?? [], []);
    } finally {
      await c.close();
    }
  });

  it('passes with a bearer token found by WLCG discovery (BEARER_TOKEN_FILE), and never prints it', async () => {
    const file = join(work, 'token');
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
    const r = await trace([ceres.url, ...caArgs()], { BEARER_TOKEN_FILE: file });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(stepLine(r.stdout, 'credentials') ?? '', /bearer token from BEARER_TOKEN_FILE .*subject trace-user/);
    assert.match(stepLine(r.stdout, 'delegation') ?? '', /^ok\s+delegation\s.*token delegation/);
    for (const part of token.split('.')) assert.ok(!(r.stdout + r.stderr).includes(part), 'a part of the token');
  });

  it('a reader that goes away (| head) does not end the trace before it has cleaned its job', async () => {
    const child = spawn(process.execPath, [MAIN, 'trace', ceres.url, ...caArgs()], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...base() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The first line read, the pipe is closed, as `head -1` would.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0);
    const c = Client.forUser(ceres);
    try {
      await until(
        async () => ((await c.req('GET', '/rest/1.1/jobs')).json().job ?? []).length === 0,
        'the jobs cleaned',
      );
    } finally {
      await c.close();
    }
  });

  it('--json: one document with every step, the job and its states', async () => {
    const r = await trace([ceres.url, ...caArgs(), '--json'], base());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const doc = JSON.parse(r.stdout) as {
      url: string;
      ok: boolean;
      version: string;
      failure: null;
      steps: { step: string; status: string; ms: number; detail: string }[];
      job: { id: string; states: { state: string; ms: number }[]; exitCode: string; leftOnCe: boolean };
      ms: number;
    };
    assert.deepEqual(Object.keys(doc), ['url', 'ok', 'version', 'failure', 'steps', 'job', 'ms']);
    assert.equal(doc.url, ceres.url);
    assert.equal(doc.ok, true);
    assert.equal(doc.version, '1.1');
    assert.equal(doc.failure, null);
    assert.deepEqual(
      doc.steps.map((s) => s.step),
      [...STEPS],
    );
    for (const s of doc.steps) {
      assert.equal(s.status, 'ok', JSON.stringify(s));
      assert.ok(Number.isInteger(s.ms) && s.ms >= 0, JSON.stringify(s));
      assert.equal(typeof s.detail, 'string');
    }
    assert.match(doc.job.id, /^\w+$/);
    assert.equal(doc.job.states.at(-1)?.state, 'FINISHED');
    assert.equal(doc.job.exitCode, '0');
    assert.equal(doc.job.leftOnCe, false);
  });

  it('an untrusted CA fails at tls, naming the certificate, its issuer and the CA directory', async () => {
    const other = await initDevPki(join(work, 'other-pki'));
    const r = await trace([ceres.url, '--ca-dir', other.files.certificatesDir], base());
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const line = stepLine(r.stdout, 'tls') ?? '';
    assert.match(line, /^FAILED\s+tls\s.*is not trusted by the CAs in /);
    assert.ok(line.includes(pki.caDn) && line.includes(other.files.certificatesDir), line);
    assert.match(r.stdout, /remedy: put the CA certificate of .* or pass the CA directory .*--ca-dir/);
    assert.equal(stepLine(r.stdout, 'interface'), undefined, 'no step after the failed one');
    assert.match(r.stderr, /trace failed at step tls: /);
  });

  it('an expired VOMS proxy fails at credentials with voms-proxy-init as the remedy', { skip: vomsSkip }, async () => {
    const server = await serverFromCaFiles(work, pki.files.caCert, pki.files.caKey, 'voms.example.org');
    const proxy = await runVomsProxyFake(
      work,
      pki.files.certificatesDir,
      { certFile: pki.files.userCert, keyFile: pki.files.userKey },
      {
        vo: 'trace',
        fqans: ['/trace/Role=NULL/Capability=NULL'],
        server,
        host: 'voms.example.org',
        hours: 1,
        pastproxy: '2:00',
      },
    );
    const file = join(work, 'expired-proxy.pem');
    writeFileSync(file, proxy.pem, { mode: 0o600 });
    const r = await trace([ceres.url, ...caArgs()], { X509_USER_PROXY: file });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(stepLine(r.stdout, 'credentials') ?? '', /^FAILED\s+credentials\s.*expired at /);
    assert.match(r.stdout, /remedy: make a new proxy: voms-proxy-init/);
    assert.equal(stepLine(r.stdout, 'tls'), undefined);
  });

  it('a caller the authorization refuses fails at authorization with the 403 and its reason', async () => {
    const r = await trace([ceres.url, ...caArgs()], { X509_USER_PROXY: refusedProxy });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(stepLine(r.stdout, 'authentication') ?? '', /^ok\s/);
    assert.match(
      stepLine(r.stdout, 'authorization') ?? '',
      /^FAILED\s+authorization\s.*refuses .*CN=refused: HTTP 403 /,
    );
    assert.match(r.stdout, /remedy: the site's authorization does not admit this identity/);
    assert.equal(stepLine(r.stdout, 'info'), undefined);
  });

  it('a proxy of a CA the service does not trust fails at authentication with the 401 and its reason', async () => {
    const stranger = await initDevPki(join(work, 'stranger-pki'));
    const r = await trace([ceres.url, ...caArgs()], { X509_USER_PROXY: stranger.files.userProxy });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(stepLine(r.stdout, 'tls') ?? '', /^ok\s/);
    assert.match(
      stepLine(r.stdout, 'authentication') ?? '',
      /^FAILED\s+authentication\s.*did not accept the credential of .*: HTTP 401 /,
    );
    assert.match(r.stdout, /remedy: check the credential: a valid proxy from a CA the site trusts/);
    assert.equal(stepLine(r.stdout, 'authorization'), undefined);
  });

  it('a queue the service does not publish fails at queue, naming the ones it does', async () => {
    const r = await trace([ceres.url, ...caArgs(), '--queue', 'nosuch'], base());
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(stepLine(r.stdout, 'queue') ?? '', /^FAILED\s+queue\s.*publishes no queue nosuch/);
    assert.match(r.stdout, /remedy: choose one of: main/);
    assert.equal(stepLine(r.stdout, 'dry-run'), undefined, 'nothing was submitted');
  });

  it('a job that fails is reported with its exit code and errors, and is cleaned', async () => {
    const r = await trace([ceres.url, ...caArgs(), '--xrsl', '(runtimeenvironment="TRACE/FAIL")'], base());
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const line = stepLine(r.stdout, 'run') ?? '';
    assert.match(line, /^FAILED\s+run\s.*ended FAILED with exit code 3/);
    assert.match(line, /stderr: the trace test refuses this job/);
    assert.match(stepLine(r.stdout, 'clean') ?? '', /^ok\s+clean\s.*removed job/);
    assert.match(r.stderr, /trace failed at step run: /);
  });

  it('a job that does not end within --timeout fails the run step, and is killed rather than left running', async () => {
    const r = await trace(
      // 12 s: ample for every step before run on a loaded machine; the job sleeps far longer.
      [ceres.url, ...caArgs(), '--timeout', '12', '--xrsl', '(runtimeenvironment="TRACE/LONG")'],
      base(),
    );
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(stepLine(r.stdout, 'run') ?? '', /^FAILED\s+run\s.*did not reach a final state within 12 s/);
    assert.match(r.stdout, /remedy: raise --timeout/);
    assert.match(stepLine(r.stdout, 'clean') ?? '', /^ok\s+clean\s.*killed job (\w+)/);
    const id = /killed job (\w+)/.exec(r.stdout)?.[1] as string;
    const c = Client.forUser(ceres);
    try {
      assert.equal((await c.waitFor([id], ['KILLED'], 60_000)).get(id), 'KILLED');
      await c.action('clean', [id]);
    } finally {
      await c.close();
    }
  });

  it('a service that stops answering fails the step it is in after --timeout, never hangs', async () => {
    victim.child.kill('SIGSTOP');
    try {
      const t0 = Date.now();
      const r = await trace([victim.url, '--ca-dir', join(victim.pkiDir, 'certificates'), '--timeout', '2'], {
        X509_USER_PROXY: join(victim.pkiDir, 'userproxy.pem'),
      });
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(stepLine(r.stdout, 'tls') ?? '', /^FAILED\s+tls\s.*did not answer within 2 s/);
      // Generous: the bound is the step's 2 s plus a loaded machine's start of node.
      assert.ok(Date.now() - t0 < 60_000);
    } finally {
      victim.child.kill('SIGCONT');
    }
  });

  it('the service killed mid-trace: connection refused at the step it was in; the job is named as left behind', async () => {
    let killed: Promise<number | null> | undefined;
    const r = await trace(
      [victim.url, '--ca-dir', join(victim.pkiDir, 'certificates'), '--xrsl', '(runtimeenvironment="TRACE/SLOW")'],
      { X509_USER_PROXY: join(victim.pkiDir, 'userproxy.pem') },
      (line) => {
        // The job sleeps in its runtime environment: the trace is following it.
        if (killed === undefined && /^\s+\+\S+ m?s\s+RUNNING$/.test(line)) killed = stopCeres(victim, 'SIGKILL');
      },
    );
    assert.ok(killed !== undefined, `the job was never seen RUNNING:\n${r.stdout}`);
    await killed;
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      stepLine(r.stdout, 'run') ?? '',
      /^FAILED\s+run\s.*connection refused by 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
    assert.match(r.stdout, /remedy: is the service running/);
    assert.equal(stepLine(r.stdout, 'clean'), undefined, 'no cleaning against a service that is gone');
    assert.match(r.stderr, /trace failed at step run: connection refused .*\(job \w+ is left on the CE\)/);
  });
});
