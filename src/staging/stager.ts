/**
 * The staging adapter the job engine calls: stage-in in PREPARING (stage-in.ts), stage-out
 * in FINISHING (stage-out.ts). It never throws for a transfer failure: it answers with
 * per-file results, a reason a user can act on, and the lines for the job's control files.
 *
 * Limits (observable, so the engine can keep jobs waiting visibly):
 *   jobs staging in / out at once (a job holds its slot only while it moves data, not
 *   while it waits for the client's uploads), file transfers across all jobs, and
 *   transfers per job. Both directions share them through one StagingShared
 *   (job-transfers.ts), with the job's transfer context, credentials and retries.
 */
import { Gfal2Limits } from './gfal2/limits.js';
import { Gfal2Spares } from './gfal2/spares.js';
import type { StagingConfig } from '../config/sections/staging.js';
import type { FileCache, CacheStats } from './cache/file-cache.js';
import type { CredentialSource } from './credentials.js';
import type { Direction, StagingShared } from './job-transfers.js';
import { silentLogger, type StagingLogger } from './logger.js';
import { Semaphore } from './semaphore.js';
import { StageIn } from './stage-in.js';
import { StageOut } from './stage-out.js';
import type { ProgressListener, StageInJob, StageOutJob, StageResult } from './types.js';

export type { Direction } from './job-transfers.js';

export interface StagerOptions {
  readonly config: StagingConfig;
  readonly credentials: CredentialSource;
  /** The shared input cache; absent (or `config.cache.enabled` false) = no caching. */
  readonly cache?: FileCache;
  readonly logger?: StagingLogger;
  /** Extra trusted CA certificates (PEM) for https sources and targets, added to Node's roots. */
  readonly ca?: readonly string[];
  /**
   * The CA directory gfal2 transfers trust (X509_CERT_DIR: GSI with xrootd, gsiftp,
   * davs through gfal2); absent: the service's own X509_CERT_DIR, else
   * /etc/grid-security/certificates.
   */
  readonly certDir?: string;
  /** Random source for retry jitter (tests). */
  readonly random?: () => number;
}

export interface SlotStats {
  readonly active: number;
  readonly queued: number;
  readonly limit: number;
}

export interface StagerStats {
  /** Jobs staging in (holding a slot) and waiting for one. */
  readonly in: SlotStats;
  readonly out: SlotStats;
  readonly downloads: SlotStats;
  readonly uploads: SlotStats;
  readonly cache?: CacheStats;
}

export class Stager {
  readonly #s: StagingShared;
  readonly #in: StageIn;
  readonly #out: StageOut;

  constructor(opts: StagerOptions) {
    const cfg = opts.config;
    const r = cfg.retry;
    this.#s = {
      cfg,
      log: opts.logger ?? silentLogger,
      cache: cfg.cache.enabled ? opts.cache : undefined,
      jobSlots: { in: new Semaphore(cfg.maxJobsStagingIn), out: new Semaphore(cfg.maxJobsStagingOut) },
      downloads: new Semaphore(cfg.maxDownloads),
      uploads: new Semaphore(cfg.maxUploads),
      retry: {
        maxAttempts: r.maxAttempts,
        initialDelayMs: r.initialDelaySeconds * 1000,
        maxDelayMs: r.maxDelaySeconds * 1000,
        multiplier: r.multiplier,
        ...(opts.random === undefined ? {} : { random: opts.random }),
      },
      credentials: opts.credentials,
      ca: opts.ca,
      gfal2Limits: new Gfal2Limits(cfg.gfal2.maxTransfersPerHost, cfg.gfal2.maxTransfersPerProtocol),
      gfal2Spares: new Gfal2Spares(
        {
          connectSeconds: cfg.timeouts.connectSeconds,
          idleSeconds: cfg.timeouts.idleSeconds,
          ...(opts.certDir === undefined ? {} : { certDir: opts.certDir }),
        },
        cfg.gfal2.spareHelpers,
      ),
    };
    this.#in = new StageIn(this.#s);
    this.#out = new StageOut(this.#s);
  }

  /** A job could start moving data now (a slot is free and nobody waits before it). */
  canStart(direction: Direction): boolean {
    return this.#s.jobSlots[direction].available();
  }

  stats(): StagerStats {
    const s = (x: Semaphore): SlotStats => ({ active: x.active, queued: x.queued, limit: x.limit });
    const { jobSlots, downloads, uploads, cache } = this.#s;
    return {
      in: s(jobSlots.in),
      out: s(jobSlots.out),
      downloads: s(downloads),
      uploads: s(uploads),
      ...(cache === undefined ? {} : { cache: cache.stats() }),
    };
  }

  /**
   * Downloads the job's inputs and waits for (or looks once at) its client uploads. Stops
   * at the first permanent failure and removes what it had half-written.
   */
  stageIn(job: StageInJob, signal: AbortSignal, progress?: ProgressListener): Promise<StageResult> {
    return this.#in.run(job, signal, progress);
  }

  /** Prunes the session to what is kept and uploads every output due on the job's outcome. */
  stageOut(job: StageOutJob, signal: AbortSignal, progress?: ProgressListener): Promise<StageResult> {
    return this.#out.run(job, signal, progress);
  }

  /** Process ids of the idle spare gfal2 helpers (tests, metrics). */
  spareHelperPids(): number[] {
    return this.#s.gfal2Spares.idlePids;
  }

  /** Settled once the idle spare gfal2 helpers have loaded gfal2 (a benchmark waits for it between its timings). */
  spareHelpersLoaded(): Promise<void> {
    return this.#s.gfal2Spares.loaded();
  }

  /** Ends the idle spare gfal2 helpers; a job's own helpers end with its staging. */
  close(): Promise<void> {
    return this.#s.gfal2Spares.close();
  }
}
