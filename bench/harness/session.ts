/**
 * One endpoint under test for the length of a run: its client, credentials, counts,
 * the jobs created so far, and what scenarios share (the parked-job pool for status,
 * info and mixed load; the filled store for list-jobs and memory).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArcClient, readCredentials, type Credentials } from './client.js';
import { keySpecText, probeEndpoint, type KeySpec } from './endpoint.js';
import type { CommonOptions, Counts } from './args.js';
import { JobTracker } from './tracker.js';
import type { Progress } from './progress.js';
import type { EndpointReport } from './results.js';
import { pidsListeningOn, rssMiB } from './proc.js';

export interface CredentialPaths {
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

export interface SessionShared {
  /** Parked jobs for status/info/mixed load. */
  pool?: string[];
  /** Jobs the endpoint lists for us, once known (kept current while the harness adds jobs). */
  storeCount?: number;
  /** How the store fill went, for the notes of list-jobs and memory. */
  storeNote?: string;
  /** Server RSS when the session began. */
  rssStartMiB?: number;
  /** Server RSS and jobs listed right before the store was filled. */
  rssBeforeStore?: { mib: number; jobs: number };
}

export interface SessionInit {
  readonly label: string;
  readonly url: string;
  readonly paths: CredentialPaths;
  readonly options: CommonOptions;
  readonly counts: Counts;
  readonly progress: Progress;
  /** Server pids; when absent, the process listening on the endpoint's port. */
  readonly pids?: readonly number[] | undefined;
}

export class EndpointSession {
  readonly tracker = new JobTracker();
  readonly shared: SessionShared = {};
  /**
   * Pids of the other endpoints measured in the same run: one still working off an
   * earlier scenario (A-REX cleaning 1,000 killed jobs takes a minute) would load the
   * machine during this endpoint's measurement, so the quiet wait waits for them too.
   */
  peerPids: number[] = [];
  readonly report: EndpointReport;

  private constructor(
    readonly init: SessionInit,
    readonly creds: Credentials,
    readonly client: ArcClient,
    readonly serverKey: KeySpec,
    readonly pids: number[],
    readonly tmpDir: string,
  ) {
    this.report = {
      label: init.label,
      url: init.url,
      version: client.version,
      pids,
      serverKey: keySpecText(serverKey),
      results: [],
    };
  }

  get label(): string {
    return this.init.label;
  }
  get counts(): Counts {
    return this.init.counts;
  }
  get options(): CommonOptions {
    return this.init.options;
  }
  get progress(): Progress {
    return this.init.progress;
  }

  /** Reads credentials, probes the endpoint (version, authorisation), finds the server pids. */
  static async open(init: SessionInit): Promise<EndpointSession> {
    const creds = await readCredentials(init.paths.cert, init.paths.key, init.paths.ca);
    const client = new ArcClient(init.url, creds, { connections: 1 });
    try {
      const probe = await probeEndpoint(client, creds);
      const port = Number(new URL(init.url).port || 443);
      const pids = init.pids !== undefined && init.pids.length > 0 ? [...init.pids] : await pidsListeningOn(port);
      const tmp = await mkdtemp(join(tmpdir(), 'ceres-bench-'));
      const s = new EndpointSession(init, creds, client, probe.serverKey, pids, tmp);
      const rss = await rssMiB(pids);
      if (rss !== undefined) s.shared.rssStartMiB = rss;
      return s;
    } catch (e) {
      await client.close();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.client.close();
    await rm(this.tmpDir, { recursive: true, force: true });
  }
}
