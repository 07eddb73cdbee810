// Deployable as a site installs services: the packed project installs with
// `npm install -g` into a prefix, puts `ceres` on that prefix's PATH, and the installed
// command works (config check, serve, admin); the systemd unit in the repository has
// what a site needs and passes `systemd-analyze verify` against the installed command.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, tempDir } from '../helpers/service.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const UNIT = join(ROOT, 'packaging', 'systemd', 'ceres.service');

function run(
  cmd: string,
  args: string[],
  o: { cwd?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { cwd: o.cwd ?? ROOT, timeout: o.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024, env: o.env ?? process.env },
      (err, stdout, stderr) => {
        resolve({
          code:
            err === null
              ? 0
              : typeof (err as { code?: unknown }).code === 'number'
                ? (err as { code: number }).code
                : 1,
          stdout,
          stderr,
        });
      },
    );
  });
}

describe('packaging: npm pack, npm install -g, systemd unit', () => {
  const dir = tempDir('pack');
  const prefix = join(dir, 'prefix');
  let tarball: string;
  let files: string[];
  before(async () => {
    // The build has run (the tests run from it); --ignore-scripts: no second build under the running tests.
    const p = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir]);
    assert.equal(p.code, 0, p.stderr);
    const info = JSON.parse(p.stdout)[0] as { filename: string; files: { path: string }[] };
    tarball = join(dir, info.filename);
    files = info.files.map((f) => f.path);
  });
  after(() => removeDir(dir));

  it('the package holds the compiled service, the docs and the systemd unit, and no tests or sources', () => {
    assert.match(tarball, /ceres-ce-\d+\.\d+\.\d+\.tgz$/);
    for (const f of [
      'dist/src/cli/main.js',
      'dist/src/service/start.js',
      'packaging/systemd/ceres.service',
      'packaging/systemd/ceres-mapping.service',
      'packaging/bdii/ceres-glue2-provider',
      'packaging/bdii/ldap-client-compat',
      'docs/operations.md',
      'README.md',
      'package.json',
    ])
      assert.ok(files.includes(f), f);
    assert.equal(
      files.filter((f) => f.startsWith('dist/test/') || f.startsWith('src/') || f.startsWith('test/')).length,
      0,
    );
  });

  it('npm install -g into a prefix puts a working ceres on its PATH', { timeout: 600_000 }, async () => {
    // --ignore-scripts: the one install script among the dependencies builds SQLite's addon
    // from source here (a minute of the run; no prebuilt binary can be fetched). The same
    // version's addon, built by this checkout's own install, is put in its place; another
    // version is built as a site's install would.
    const i = await run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball],
      { timeoutMs: 600_000 },
    );
    assert.equal(i.code, 0, i.stderr);
    const installed = join(prefix, 'lib', 'node_modules', 'ceres-ce');
    const sqlite = (root: string): string => join(root, 'node_modules', 'better-sqlite3');
    const version = (root: string): string =>
      (JSON.parse(readFileSync(join(sqlite(root), 'package.json'), 'utf8')) as { version: string }).version;
    const addon = join('build', 'Release', 'better_sqlite3.node');
    if (version(installed) === version(ROOT) && existsSync(join(sqlite(ROOT), addon))) {
      mkdirSync(dirname(join(sqlite(installed), addon)), { recursive: true });
      copyFileSync(join(sqlite(ROOT), addon), join(sqlite(installed), addon));
    } else {
      const b = await run('npm', ['rebuild', 'better-sqlite3'], { cwd: installed, timeoutMs: 600_000 });
      assert.equal(b.code, 0, b.stderr);
    }
    const ceres = join(prefix, 'bin', 'ceres');
    assert.ok(existsSync(ceres));
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` };
    writeFileSync(
      join(dir, 'good.json'),
      JSON.stringify({ listen: '127.0.0.1:0', stateDir: 'state', cluster: { hostname: 'ce.example.org' } }),
    );
    const ok = await run('ceres', ['admin', 'config', 'check', join(dir, 'good.json')], { env, cwd: dir });
    assert.equal(ok.code, 0, ok.stderr);
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ listen: 'nowhere' }));
    const bad = await run('ceres', ['admin', 'config', 'check', join(dir, 'bad.json')], { env, cwd: dir });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /listen/);
    // The installed service starts, answers to the admin command, and stops on SIGTERM with 0.
    const child = spawn(ceres, ['serve', '--config', join(dir, 'good.json')], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (
        !/service URL https:\/\/ce\.example\.org:\d+\/arex/.test(out) &&
        Date.now() < deadline &&
        child.exitCode === null
      )
        await new Promise((r) => setTimeout(r, 100));
      assert.match(out, /service URL https:\/\/ce\.example\.org:\d+\/arex/);
      const st = await run('ceres', ['admin', '--config', join(dir, 'good.json'), 'status'], { env, cwd: dir });
      assert.match(st.stdout, new RegExp(`service:\\s+running \\(pid ${child.pid}\\)`));
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });

  it('the systemd unit: service user, port 443 capability, restarts that leave jobs running; verifies against the installed command', async () => {
    const unit = readFileSync(UNIT, 'utf8');
    assert.match(unit, /^User=ceres$/m);
    assert.match(unit, /^AmbientCapabilities=CAP_NET_BIND_SERVICE$/m);
    assert.match(unit, /^KillMode=process$/m);
    assert.match(unit, /^ExecStart=\S+\/ceres serve --config \S+$/m);
    const analyze = await run('systemd-analyze', ['--version']);
    if (analyze.code !== 0) return; // no systemd tools on this machine: the static checks above stand
    const local = join(dir, 'ceres.service');
    writeFileSync(local, unit.replace(/^ExecStart=\S+/m, `ExecStart=${join(prefix, 'bin', 'ceres')}`));
    const v = await run('systemd-analyze', ['verify', local]);
    assert.doesNotMatch(v.stderr, /ceres\.service:.*(not executable|Unknown key|Failed|Invalid)/, v.stderr);
  });
});
