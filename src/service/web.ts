/**
 * Wiring of the web interface (src/api/web) for the composition root: its view of the
 * cluster (jobs per queue from the store), the control files it shows, the keyset pages.
 */
import { readFile, stat } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { registerWeb } from '../api/web/routes.js';
import { WebSessionFiles } from '../api/web/session-access.js';
import { CERES_VERSION } from '../config/version.js';
import type { Authenticator, Authorizer } from '../http/caller.js';
import type { JobService } from '../jobs/job-service.js';
import type { JobActions } from '../jobs/job-actions.js';
import type { DelegationService } from '../delegations/delegation-service.js';
import type { SessionDirs } from '../sessions/session-dirs.js';
import type { SessionFiles } from '../sessions/session-files.js';
import { DIAGNOSE_NAMES, isDiagnoseName, type ControlDir } from '../store/control-dir.js';
import type { Db } from '../store/database.js';
import { JobPages } from '../store/job-pages.js';
import type { JobStore } from '../store/job-store.js';
import type { JobRecord } from '../store/job-record.js';
import { REST_STATES, WAITING_STATES } from '../vocabulary/job-states.js';
import type { InfoSource } from '../info/info-source.js';
import type { SiteSeries } from '../store/site-series.js';

const WAITING = new Set<string>(WAITING_STATES);
const MAX_SHOWN_CONTROL_BYTES = 256 * 1024;

export interface WebWiring {
  /** The application built by src/api/app.ts (its type named without importing the framework here). */
  readonly app: Parameters<typeof registerWeb>[0];
  readonly mountPoint: string;
  readonly authenticate: Authenticator;
  readonly authorize: Authorizer | undefined;
  readonly db: Db;
  readonly store: JobStore;
  readonly control: ControlDir;
  readonly jobs: JobService;
  readonly actions: JobActions;
  readonly delegations: DelegationService;
  readonly sessions: SessionDirs;
  readonly files: SessionFiles;
  /** The configured queues' names, read per request: a reload (SIGHUP) may add or remove queues. */
  readonly queues: () => readonly string[];
  readonly lrms: string;
  readonly maxUploadBytes: number;
  /** Site administrators of the web interface (config web.admins). */
  readonly admins: readonly string[];
  /** The submission form's bounds: one description (jobs.maxDescriptionBytes), its input files (the per-job quota). */
  readonly maxDescriptionBytes: number;
  readonly maxInputBytes: number;
  /** The newest job event's sequence number (the pages follow the event stream from it). */
  readonly latestEvent?: () => number;
  /** Why a job waits (src/jobs/wait-reason.ts), shown on its page. */
  readonly waitReason?: (j: JobRecord) => string | undefined;
  /** The info document's source (the REST `info` endpoint's), for the info page. */
  readonly info: InfoSource;
  /** The site's load over time, for the overview's pictures. */
  readonly series: SiteSeries;
  /** Who sees the pictures per VO and route (config web.siteFiguresByVo). */
  readonly figuresByVo: 'admins' | 'everyone';
  /** How often the series counts (config web.siteSeriesTickSeconds). */
  readonly tickSeconds: number;
}

export function wireWeb(w: WebWiring): void {
  const files = new WebSessionFiles(w.sessions, w.files);
  registerWeb(w.app, {
    mountPoint: w.mountPoint,
    authenticate: w.authenticate,
    authorize: w.authorize,
    jobs: w.jobs,
    anyJob: (id) => w.store.get(id),
    ...(w.waitReason !== undefined ? { waitReason: w.waitReason } : {}),
    admins: w.admins,
    actions: w.actions,
    pages: new JobPages(w.db),
    restStates: REST_STATES,
    delegations: w.delegations,
    files,
    overview: () => {
      const per = new Map(w.queues().map((q) => [q, { queue: q, running: 0, waiting: 0 }]));
      for (const r of w.store.countActiveByState()) {
        const q = per.get(r.queue) ?? { queue: r.queue, running: 0, waiting: 0 };
        per.set(r.queue, q);
        if (r.state === 'INLRMS') q.running += r.n;
        else if (WAITING.has(r.state)) q.waiting += r.n;
      }
      // The fork backend runs on this host: its slots are the host's processors.
      const slots = w.lrms === 'fork' ? availableParallelism() : undefined;
      const queues = [...per.values()].map((q) => ({
        ...q,
        free: slots === undefined ? undefined : Math.max(0, slots - q.running),
      }));
      return { version: CERES_VERSION, healthy: true, queues };
    },
    readControl: async (id, name) => {
      if (!isDiagnoseName(name)) return undefined;
      try {
        const b = await readFile(w.control.file(id, name));
        return b.subarray(0, MAX_SHOWN_CONTROL_BYTES).toString('utf8');
      } catch {
        return undefined;
      }
    },
    rawDescription: (id) => w.store.rawDescription(id),
    diagnoseNames: DIAGNOSE_NAMES,
    existingControl: async (id) => {
      const there = await Promise.all(
        DIAGNOSE_NAMES.map((n) =>
          stat(w.control.file(id, n)).then(
            (st) => st.isFile(),
            () => false,
          ),
        ),
      );
      return DIAGNOSE_NAMES.filter((_, i) => there[i]);
    },
    maxUploadBytes: w.maxUploadBytes,
    latestEvent: w.latestEvent,
    submit: {
      jobs: w.jobs,
      queues: w.queues,
      delegations: (owner) => w.delegations.list(owner).map((d) => d.id),
      putInput: (job, name, body) => files.putIn(job, '', name, body),
      get maxDescriptionBytes() {
        return w.maxDescriptionBytes; // reloadable: read per request
      },
      maxInputBytes: w.maxInputBytes,
    },
    site: {
      info: () => w.info.document(),
      series: w.series,
      figuresByVo: w.figuresByVo,
      tickSeconds: w.tickSeconds,
    },
  });
}
