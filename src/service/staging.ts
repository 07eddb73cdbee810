/**
 * Data staging for the engine. Until remote transfers are wired, stage-in waits for
 * the client's uploads (the `input_status` control file lists completed uploads) and
 * sets executable bits; stage-out prunes the session to the listed outputs.
 */
import { chmod, readdir, rm, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { ControlDir } from '../jobs/control-dir.js';
import type { StagingPort } from '../engine/scheduler/ports.js';
import type { DelegationsWiring } from './delegations.js';

export interface StagingDeps {
  config: Config;
  control: ControlDir;
  sessionDir: (id: string) => string;
  delegations: DelegationsWiring;
  log: Logger;
  cacheDir: string;
}

const UPLOAD_WAIT_MS = 600_000;

export function createStagingPort(d: StagingDeps): StagingPort {
  return {
    async stageIn(job, signal) {
      const desc = job.description;
      const remote = desc.inputFiles.filter((f) => f.source !== undefined);
      if (remote.length) return { ok: false, reason: `Data download failed: remote inputs are not supported (${remote[0]?.name ?? ''})` };
      const expected = desc.inputFiles.filter((f) => f.source === undefined).map((f) => f.name.replace(/^\/+/, ''));
      const deadline = Date.now() + UPLOAD_WAIT_MS;
      for (;;) {
        const got = new Set(((await d.control.read(job.id, 'input_status'))?.toString('utf8') ?? '').split('\n').map((l) => l.replace(/^\/+/, '')));
        const missing = expected.filter((n) => !got.has(n));
        if (missing.length === 0) break;
        if (signal.aborted) return { ok: false, reason: 'Stage-in cancelled', aborted: true };
        if (Date.now() > deadline) return { ok: false, reason: `User file: ${missing[0] ?? ''} - Timeout waiting` };
        await new Promise((r) => setTimeout(r, 100));
      }
      for (const f of desc.inputFiles) {
        if (f.executable || f.name === desc.executable) await chmod(join(d.sessionDir(job.id), f.name), 0o700).catch(() => undefined);
      }
      return { ok: true };
    },
    async stageOut(job, mode) {
      const desc = job.description;
      void mode; // outputs without a target are kept whatever the outcome (A-REX)
      const keep = desc.outputFiles.map((o) => o.name.replace(/^\/+/, '').replace(/\/+$/, ''));
      // Unlike A-REX, stdout, stderr and the log directory are always kept: a raw xRSL
      // that does not list them as outputs would otherwise lose them.
      for (const f of [desc.stdout, desc.stderr, desc.logDir]) if (f) keep.push(f.replace(/^\/+/, '').replace(/\/+$/, ''));
      if (keep.includes('')) return { ok: true };
      await prune(d.sessionDir(job.id), '', keep);
      return { ok: true };
    },
  };
}

/** Remove every entry not named by `keep` (or on the way to a kept entry); never follows links. */
async function prune(root: string, rel: string, keep: readonly string[]): Promise<void> {
  let names: string[];
  try {
    names = await readdir(join(root, rel));
  } catch {
    return;
  }
  for (const n of names) {
    const p = rel ? `${rel}/${n}` : n;
    if (keep.includes(p)) continue;
    const st = await lstat(join(root, p));
    if (st.isDirectory() && keep.some((k) => k.startsWith(`${p}/`))) await prune(root, p, keep);
    else await rm(join(root, p), { recursive: true, force: true });
  }
}
