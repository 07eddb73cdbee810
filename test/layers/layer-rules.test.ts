// The layer checker (.dependency-cruiser.cjs, `npm run check:layers`) run on small trees
// built here: a tree that keeps the rules passes, and a tree with one import of each
// forbidden kind fails, naming every one of them. (The real tree is checked by
// `npm test` before the tests run.)
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

// Tests run with the repository root as working directory (npm test).
const root = process.cwd();
const cruiser = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  readonly rule: string;
  readonly from: string;
  readonly to: string;
}

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ceres-layers-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src/**/*.ts'],
    }),
  );
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** Runs the checker as `npm run check:layers` does; violations parsed from its report. */
function cruise(dir: string): { status: number | null; violations: Violation[]; output: string } {
  const r = spawnSync(process.execPath, [cruiser, 'src', '--config', join(root, '.dependency-cruiser.cjs')], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const violations: Violation[] = [];
  const lines = r.stdout.split('\n');
  lines.forEach((line, i) => {
    // `error <rule>: <from> → <to>`; a cycle continues on the next lines (`<to> →`, ...).
    const m = /^\s*error ([\w-]+): (\S+) →\s*(\S*)/.exec(line);
    const to = m?.[3] || (lines[i + 1] ?? '').trim().split(/\s/)[0] || '';
    if (m)
      violations.push({
        rule: m[1] as string,
        from: m[2] as string,
        to: to.replace(/^.*node_modules\//, 'node_modules/'),
      });
  });
  return { status: r.status, violations, output: r.stdout + r.stderr };
}

const good: Record<string, string> = {
  'src/vocabulary/job-states.ts': "export const STATES = ['A'] as const;\n",
  'src/store/job-store.ts': "import { STATES } from '../vocabulary/job-states.js';\nexport const n = STATES.length;\n",
  'src/engine/scheduler.ts': "import { n } from '../store/job-store.js';\nexport const m = n;\n",
  'src/jobs/job-service.ts': "import { m } from '../engine/scheduler.js';\nexport const k = m;\n",
  'src/http/send.ts': "import type { FastifyReply } from 'fastify';\nexport type R = FastifyReply;\n",
  'src/api/app.ts':
    "import type { R } from '../http/send.js';\nimport { k } from '../jobs/job-service.js';\nexport const a: R | number = k;\n",
  'src/process/logger.ts': "import { n } from '../store/job-store.js';\nexport const log = n;\n",
  'src/service/start.ts':
    "import { a } from '../api/app.js';\nimport { log } from '../process/logger.js';\nexport const s = a + log;\n",
  'src/cli/main.ts': "import { s } from '../service/start.js';\nexport const c = s;\n",
  'src/staging/gfal2/helper.ts': "import { spawn } from 'node:child_process';\nexport const h = spawn;\n",
  // Every backend builds on the shared core, and on its own files.
  'src/lrms/core/poller.ts': 'export const poll = 1;\n',
  'src/lrms/fork/fork-backend.ts': "import { poll } from '../core/poller.js';\nexport const f = poll;\n",
  'src/lrms/slurm/squeue.ts': "import { poll } from '../core/poller.js';\nexport const q = poll;\n",
  'src/lrms/slurm/slurm-backend.ts': "import { q } from './squeue.js';\nexport const sb = q;\n",
  'src/lrms/gridengine/qstat.ts': "import { poll } from '../core/poller.js';\nexport const g = poll;\n",
  // The trace client builds on the leaves; the command line uses it.
  'src/client/trace.ts': "import { STATES } from '../vocabulary/job-states.js';\nexport const t = STATES;\n",
  'src/cli/trace-command.ts': "import { t } from '../client/trace.js';\nexport const tc = t;\n",
};

describe('layer checker', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('passes a tree whose arrows all run down the layers', () => {
    const dir = tree(good);
    dirs.push(dir);
    const r = cruise(dir);
    assert.deepEqual(r.violations, []);
    assert.equal(r.status, 0, r.output);
  });

  describe('fails on each forbidden import', () => {
    let r: ReturnType<typeof cruise>;
    before(() => {
      const dir = tree({
        ...good,
        'src/engine/uses-api.ts': "import { a } from '../api/app.js';\nexport const x = a;\n",
        'src/engine/uses-root.ts': "import type { s } from '../service/start.js';\nexport type X = typeof s;\n",
        'src/lrms/backend.ts': "import { m } from '../engine/scheduler.js';\nexport const b = m;\n",
        'src/store/uses-http.ts': "import type { R } from '../http/send.js';\nexport type X = R;\n",
        'src/staging/uses-api.ts': "import { a } from '../api/app.js';\nexport const y = a;\n",
        'src/messaging/uses-engine.ts': "import { m } from '../engine/scheduler.js';\nexport const q = m;\n",
        'src/sessions/send.ts': "import type { FastifyReply } from 'fastify';\nexport type X = FastifyReply;\n",
        'src/sessions/server.ts': "import { createServer } from 'node:http';\nexport const srv = createServer;\n",
        'src/jobs/uses-root.ts': "import { s } from '../service/start.js';\nexport const z = s;\n",
        'src/http/uses-api.ts': "import { a } from '../api/app.js';\nexport const w = a;\n",
        'src/vocabulary/uses-store.ts': "import { n } from '../store/job-store.js';\nexport const v = n;\n",
        'src/staging/spawns.ts': "import { spawn } from 'node:child_process';\nexport const sp = spawn;\n",
        'src/info/ping.ts': "import { pong } from './pong.js';\nexport const ping = (): number => pong();\n",
        'src/info/pong.ts': "import { ping } from './ping.js';\nexport const pong = (): number => ping();\n",
        // Type imports count too: the three the checker once let through by name.
        'src/jobdesc/model.ts': 'export interface JobDescription { readonly executable: string }\n',
        'src/store/job-fields.ts':
          "import type { JobDescription } from '../jobdesc/model.js';\nexport type D = JobDescription;\n",
        'src/delegations/types.ts': "export type DelegationType = 'x509' | 'jwt';\n",
        'src/accounts/job-credentials.ts':
          "import type { DelegationType } from '../delegations/types.js';\nexport type T = DelegationType;\n",
        'src/engine/state-machine.ts': "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n",
        'src/jobs/runs-tar.ts': "import { spawn } from 'node:child_process';\nexport const run = spawn;\n",
        'src/jobs/uses-process.ts': "import { log } from '../process/logger.js';\nexport const j = log;\n",
        'src/process/uses-engine.ts': "import { m } from '../engine/scheduler.js';\nexport const e = m;\n",
        'src/authz/config-check.ts': 'export const check = (): undefined => undefined;\n',
        'src/config/load.ts': "import { check } from '../authz/config-check.js';\nexport const load = check;\n",
        // One backend borrowing another's files, and the core reaching into a backend.
        'src/lrms/slurm/uses-fork.ts': "import { f } from '../fork/fork-backend.js';\nexport const u = f;\n",
        'src/lrms/gridengine/uses-slurm.ts': "import { q } from '../slurm/squeue.js';\nexport const u = q;\n",
        'src/lrms/kubernetes/uses-ge.ts': "import { g } from '../gridengine/qstat.js';\nexport const u = g;\n",
        'src/lrms/core/uses-fork.ts': "import { f } from '../fork/fork-backend.js';\nexport const u = f;\n",
        // The trace client reaching into the service, and the service calling the client.
        'src/client/uses-store.ts': "import { n } from '../store/job-store.js';\nexport const cs = n;\n",
        'src/jobs/uses-client.ts': "import { t } from '../client/trace.js';\nexport const jc = t;\n",
      });
      dirs.push(dir);
      r = cruise(dir);
    });

    it('exits non-zero', () => assert.notEqual(r.status, 0, r.output));

    const expect: [string, string, string][] = [
      ['engine-not-up', 'src/engine/uses-api.ts', 'src/api/app.ts'],
      ['engine-not-up', 'src/engine/uses-root.ts', 'src/service/start.ts'],
      ['composition-root-on-top', 'src/engine/uses-root.ts', 'src/service/start.ts'],
      ['adapters-not-up', 'src/lrms/backend.ts', 'src/engine/scheduler.ts'],
      ['adapters-not-up', 'src/store/uses-http.ts', 'src/http/send.ts'],
      ['adapters-not-up', 'src/staging/uses-api.ts', 'src/api/app.ts'],
      ['adapters-not-up', 'src/messaging/uses-engine.ts', 'src/engine/scheduler.ts'],
      ['fastify-only-in-http-and-api', 'src/sessions/send.ts', 'node_modules/fastify/types/reply.d.ts'],
      ['http-server-only-in-http-and-api', 'src/sessions/server.ts', 'http'],
      ['domain-knows-no-http', 'src/jobs/uses-root.ts', 'src/service/start.ts'],
      ['transport-below-rest', 'src/http/uses-api.ts', 'src/api/app.ts'],
      ['vocabulary-is-a-leaf', 'src/vocabulary/uses-store.ts', 'src/store/job-store.ts'],
      ['no-cycles', 'src/info/ping.ts', 'src/info/pong.ts'],
      ['adapters-not-up', 'src/store/job-fields.ts', 'src/jobdesc/model.ts'],
      ['adapters-not-up', 'src/accounts/job-credentials.ts', 'src/delegations/types.ts'],
      ['leaves-import-no-layer', 'src/config/load.ts', 'src/authz/config-check.ts'],
      ['state-machine-pure', 'src/engine/state-machine.ts', 'fs'],
      ['processes-only-in-lrms-and-accounts', 'src/jobs/runs-tar.ts', 'child_process'],
      ['process-housekeeping-for-the-root', 'src/jobs/uses-process.ts', 'src/process/logger.ts'],
      ['process-housekeeping-not-up', 'src/process/uses-engine.ts', 'src/engine/scheduler.ts'],
      ['processes-only-in-lrms-and-accounts', 'src/staging/spawns.ts', 'child_process'],
      ['backends-apart', 'src/lrms/slurm/uses-fork.ts', 'src/lrms/fork/fork-backend.ts'],
      ['backends-apart', 'src/lrms/gridengine/uses-slurm.ts', 'src/lrms/slurm/squeue.ts'],
      ['backends-apart', 'src/lrms/kubernetes/uses-ge.ts', 'src/lrms/gridengine/qstat.ts'],
      ['lrms-core-knows-no-backend', 'src/lrms/core/uses-fork.ts', 'src/lrms/fork/fork-backend.ts'],
      ['client-outside-the-service', 'src/client/uses-store.ts', 'src/store/job-store.ts'],
      ['client-for-the-command-line', 'src/jobs/uses-client.ts', 'src/client/trace.ts'],
    ];
    for (const [rule, from, to] of expect) {
      it(`${rule}: ${from} -> ${to.replace(/^node_modules\/(\w+).*/, '$1')}`, () => {
        const hit = r.violations.find(
          (v) =>
            v.rule === rule && v.from === from && (v.to === to || v.to.startsWith(to.replace(/\/types\/.*$/, '/'))),
        );
        assert.ok(hit, `not reported; reported: ${JSON.stringify(r.violations, null, 1)}`);
      });
    }

    it('reports nothing in the part of the tree that keeps the rules', () => {
      const clean = Object.keys(good).map((p) => resolve('/', p).slice(1));
      assert.deepEqual(
        r.violations.filter((v) => clean.includes(v.from)),
        [],
      );
    });
  });
});
