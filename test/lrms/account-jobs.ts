// Fork jobs under real local accounts, for the tests that run them (as root): a backend in
// `<root>/lrms/fork` with the C wrapper, session directories owned by the job's account,
// and a run that waits for the final update.
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ForkBackend, type ForkBackendOptions } from '../../src/lrms/fork/fork-backend.js';
import type { BatchJobSpec, BatchResult } from '../../src/lrms/backend.js';
import type { TestAccount } from '../helpers/local-accounts.js';
import { until } from './backend.case.js';

export interface SpecOptions {
  /** The job's local account: the owner's by default, null for none. */
  readonly account?: string | null;
  /** Where the `sessions` folder is made (default: the root). */
  readonly base?: string;
  readonly more?: Partial<BatchJobSpec>;
}

export class AccountJobs {
  readonly finals = new Map<string, BatchResult>();
  /** Jobs specified so far: the last one's folders are `s<count>` and `l<count>`. */
  count = 0;

  private constructor(
    readonly root: string,
    readonly backend: ForkBackend,
    readonly prefix: string,
  ) {
    backend.onUpdate((id, u) => {
      if (u.kind === 'final') this.finals.set(id, u.result);
    });
  }

  /** The backend of `root` (traversable by the accounts, 0711), its lrms folder the service's alone. */
  static async create(root: string, prefix: string, options: Partial<ForkBackendOptions> = {}): Promise<AccountJobs> {
    const backend = await ForkBackend.create({
      workDir: join(root, 'lrms', 'fork'),
      wrapper: 'c',
      killGraceSeconds: 1,
      pollIntervalMs: 100,
      ...options,
    });
    await chmod(join(root, 'lrms'), 0o700);
    return new AccountJobs(root, backend, prefix);
  }

  /** A session directory owned by `owner` (0700) and a spec running `script` there. */
  async spec(owner: TestAccount, script: string, o: SpecOptions = {}): Promise<BatchJobSpec> {
    const i = ++this.count;
    const base = o.base ?? this.root;
    const sessionDir = join(base, 'sessions', `s${i}`);
    await mkdir(join(base, 'sessions'), { recursive: true, mode: 0o711 });
    await mkdir(sessionDir, { mode: 0o700 });
    await chown(sessionDir, owner.uid, owner.gid);
    const account = o.account === undefined ? owner.name : o.account;
    return {
      jobId: `${this.prefix}-${process.pid}-${i}`,
      sessionDir,
      lrmsDir: join(this.root, 'lrms', 'jobs', `l${i}`),
      executable: '/bin/sh',
      arguments: ['-c', script],
      stdout: 'out',
      stderr: 'err',
      environment: [],
      runtimeEnvironments: [],
      limits: {},
      slots: 1,
      ...(account !== null ? { localAccount: account } : {}),
      ...o.more,
    };
  }

  /** The text of the job's session file `f` ('' when there is none). */
  file(s: BatchJobSpec, f: string): string {
    const path = join(s.sessionDir, f);
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  }

  /** Submit and wait for the final update; the result, stdout and stderr. */
  async run(s: BatchJobSpec): Promise<{ r: BatchResult; out: string; err: string }> {
    const id = await this.backend.submit(s);
    await until(`the final update of ${s.jobId}`, () => this.finals.has(id));
    return { r: this.finals.get(id) as BatchResult, out: this.file(s, 'out'), err: this.file(s, 'err') };
  }
}
