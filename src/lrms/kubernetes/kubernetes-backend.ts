/**
 * The Kubernetes batch backend (docs/batch-backends.md, "Kubernetes"): each job is one
 * batch/v1 Job named after the Ceres job id (so a repeated submit finds the first one: 409
 * AlreadyExists), followed through one watch of Jobs and one of Pods with the managed-by label.
 *
 * The end of a job is the Job's condition Complete or Failed (a DeadlineExceeded Failed is the
 * wall time limit), with the exit code from its last pod's terminated state; a Job deleted by
 * someone else ends the job as lost; a pod that cannot pull its image or be scheduled for
 * `pendingTimeoutMs` has its Job deleted and the job fails with Kubernetes's reason. A pod
 * that no schedulable node could hold even empty (more CPUs or memory than the largest node's
 * allocatable: a job the submission check let through because the node list was not known
 * yet) fails at once on its Unschedulable condition, not after the timeout. Logs are
 * read into the lrms directory before the Job is deleted or its TTL removes it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BatchV1Api, CoreV1Api, KubeConfig, type V1Job, type V1Node, type V1Pod } from '@kubernetes/client-node';
import type {
  BatchBackend,
  BatchClusterInfo,
  BatchJobRef,
  BatchJobSpec,
  BatchResult,
  BatchUpdate,
  BatchUpdateListener,
} from '../backend.js';
import { ceError } from '../../errors/ce-error.js';
import type { AccountResolver } from '../../accounts/resolve-account.js';
import { MANAGED_BY, MISSING_EXECUTABLE, jobManifest, jobName, type ManifestOptions } from './job-manifest.js';
import { ResourceWatch } from './resource-watch.js';
import { podView, apiStatus } from './pod-view.js';
import { writeDiag } from '../core/diag-file.js';
import { validateSpec } from '../core/job-script.js';
import { clusterFromNodes, fitsNoNode } from './node-capacity.js';
import { chooseRteImage } from './rte-images.js';

/** The service's logger (pino's shape), as the other backends take it. */
export interface BackendLog {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

export interface KubernetesBackendOptions extends ManifestOptions {
  readonly workDir: string;
  readonly kubeconfig: string;
  readonly jobNamePrefix: string;
  readonly pendingTimeoutMs: number;
  readonly createPerSecond: number;
  readonly requestAttempts: number;
  readonly backoffMs: number;
  /** How old the node figures of the info document may get before the nodes are listed again. */
  readonly infoRefreshMs: number;
  /** The configured queues (cluster.queues), each published with the cluster's figures; absent: those of `images`. */
  readonly queues?: readonly string[];
  readonly log?: BackendLog;
  readonly accounts?: AccountResolver;
}

interface Tracked {
  readonly localId: string;
  readonly jobId: string;
  readonly lrmsDir: string;
  /** The last pod of the Job seen (its replacement after an eviction is newer). */
  pod?: V1Pod;
  job?: V1Job;
  cancelled: boolean;
  done: boolean;
  /** Handed over by recover(): a list without its Job means it is gone. */
  recovered: boolean;
  lastState?: string;
  pendingSince?: number;
  chain: Promise<void>;
}

/** How old a node list may be to fail an unschedulable pod at once on it (else it is listed again). */
const NODES_FRESH_MS = 5000;

/** Retry only what a retry can help: no answer at all, or the API server's 429 / 5xx. */
function retriable(e: unknown): boolean {
  const code = apiStatus(e);
  return code === undefined || code === 429 || code >= 500;
}

export class KubernetesBackend implements BatchBackend {
  readonly name = 'kubernetes';
  readonly #o: KubernetesBackendOptions;
  readonly #batch: BatchV1Api;
  readonly #core: CoreV1Api;
  readonly #jobs = new Map<string, Tracked>();
  readonly #jobWatch: ResourceWatch<V1Job>;
  readonly #podWatch: ResourceWatch<V1Pod>;
  #listener: BatchUpdateListener = () => undefined;
  #closed = false;
  #nextCreate = 0;
  #pendingTimer: NodeJS.Timeout;
  #problem: string | undefined;
  /** Every pod with the managed-by label, by name, as the pod watch last saw it (the counts per queue). */
  readonly #pods = new Map<string, V1Pod>();
  #nodes: readonly V1Node[] | undefined;
  /** When the nodes were last asked for (answered or not): a failing API server is not asked per read. */
  #nodesAskedAt = 0;
  #nodeRefresh: Promise<void> | undefined;

  private constructor(o: KubernetesBackendOptions, kc: KubeConfig) {
    this.#o = o;
    this.#batch = kc.makeApiClient(BatchV1Api);
    this.#core = kc.makeApiClient(CoreV1Api);
    const ns = o.namespace;
    const handlers = {
      onProblem: (w: string) => {
        this.#problem = w;
        this.#log('warn', w);
      },
    };
    this.#jobWatch = new ResourceWatch<V1Job>(
      kc,
      `/apis/batch/v1/namespaces/${ns}/jobs`,
      MANAGED_BY,
      () => this.#batch.listNamespacedJob({ namespace: ns, labelSelector: MANAGED_BY }),
      { ...handlers, onList: (items) => this.#jobList(items), onEvent: (t, j) => this.#jobEvent(t, j) },
      o.backoffMs,
    );
    this.#podWatch = new ResourceWatch<V1Pod>(
      kc,
      `/api/v1/namespaces/${ns}/pods`,
      MANAGED_BY,
      () => this.#core.listNamespacedPod({ namespace: ns, labelSelector: MANAGED_BY }),
      {
        ...handlers,
        onList: (items) => {
          this.#pods.clear();
          items.forEach((p) => this.#podEvent('MODIFIED', p));
        },
        onEvent: (t, p) => this.#podEvent(t, p),
      },
      o.backoffMs,
    );
    this.#pendingTimer = setInterval(() => this.#checkPending(), Math.min(1000, o.pendingTimeoutMs / 2));
    this.#pendingTimer.unref();
  }

  static async create(o: KubernetesBackendOptions): Promise<KubernetesBackend> {
    if (o.volume.mountPath === '') {
      throw ceError(
        'CE_ERR_LRMS_UNAVAILABLE',
        'lrms.kubernetes.volume.mountPath must name where pods see the session directories',
      );
    }
    const kc = new KubeConfig();
    if (o.kubeconfig !== '') kc.loadFromFile(o.kubeconfig);
    else kc.loadFromDefault();
    await mkdir(o.workDir, { recursive: true });
    const b = new KubernetesBackend(o, kc);
    b.#podWatch.start();
    b.#jobWatch.start();
    return b;
  }

  onUpdate(listener: BatchUpdateListener): void {
    this.#listener = listener;
  }

  /**
   * The info document's figures: one list of the nodes per `infoRefreshMs` at most (asked only
   * while the document is read, never per request), the pods from the watch.
   */
  clusterInfo(): BatchClusterInfo | undefined {
    if (!this.#closed && Date.now() - this.#nodesAskedAt > this.#o.infoRefreshMs) void this.refreshClusterInfo();
    if (this.#nodes === undefined) return undefined;
    const queues = this.#o.queues ?? Object.keys(this.#o.images);
    return clusterFromNodes(this.#nodes, [...this.#pods.values()], queues);
  }

  /** List the nodes now; one list at a time. A failure keeps the last figures and is logged. */
  refreshClusterInfo(): Promise<void> {
    this.#nodeRefresh ??= (async () => {
      this.#nodesAskedAt = Date.now();
      try {
        this.#nodes = (await this.#core.listNode()).items;
      } catch (e) {
        this.#log('warn', `cannot list the nodes (the last figures stay): ${describe(e)}`);
      } finally {
        this.#nodeRefresh = undefined;
      }
    })();
    return this.#nodeRefresh;
  }

  async submit(spec: BatchJobSpec): Promise<string> {
    if (this.#closed) throw ceError('CE_ERR_LRMS_CLOSED', 'the Kubernetes backend is closed');
    validateSpec(spec);
    const name = jobName(this.#o.jobNamePrefix, spec.jobId);
    // A job meant for an account never runs as another: without a resolver to look the
    // account up, it is refused, not run as the service's account (job-manifest.ts `runAs`).
    if (spec.localAccount !== undefined && this.#o.accounts === undefined)
      throw ceError(
        'CE_ERR_LRMS_SUBMIT_FAILED',
        `the job is to run as local account ${spec.localAccount}, and this backend has no account resolver`,
      );
    const account = spec.localAccount !== undefined ? await this.#o.accounts!.resolve(spec.localAccount) : undefined;
    // Checked at submission already (description-port.ts); a reload may have removed the image since.
    const rte = chooseRteImage(this.#o.runtimeEnvironments, spec.runtimeEnvironmentNames ?? []);
    if (!rte.ok)
      throw ceError(
        'CE_ERR_LRMS_SUBMIT_FAILED',
        `runtime environment ${rte.names.join(' and ')}: ${rte.problem === 'no-image' ? 'no container image configured' : 'different images'}`,
      );
    const manifest = jobManifest(name, spec, this.#o, account, rte.image);
    await mkdir(spec.lrmsDir, { recursive: true });
    this.#track(name, spec.jobId, spec.lrmsDir);
    await this.#throttle();
    try {
      await this.#retry(`create Job ${name}`, () =>
        this.#batch.createNamespacedJob({ namespace: this.#o.namespace, body: manifest }),
      );
    } catch (e) {
      // 409: this job was created before (a submit repeated after a crash): it is the same job.
      if (apiStatus(e) !== 409) {
        this.#jobs.delete(name);
        throw ceError('CE_ERR_LRMS_SUBMIT_FAILED', `Kubernetes refused Job ${name}: ${describe(e)}`);
      }
    }
    await writeFile(join(spec.lrmsDir, 'kubernetes-job'), `${this.#o.namespace}/${name}\n`);
    return name;
  }

  async recover(jobs: readonly BatchJobRef[]): Promise<void> {
    for (const j of jobs) if (!this.#jobs.has(j.localId)) this.#track(j.localId, j.jobId, j.lrmsDir).recovered = true;
    // A fresh list settles each one: its state, or its end, or lost when its Job is gone.
    this.#jobWatch.relist();
    this.#podWatch.relist();
    await Promise.all([this.#jobWatch.listed, this.#podWatch.listed]);
  }

  async cancel(localId: string): Promise<boolean> {
    const t = this.#jobs.get(localId);
    if (!t || t.done) return false;
    t.cancelled = true;
    await this.#delete(t);
    return true;
  }

  async usable(): Promise<string | undefined> {
    return this.#closed ? 'closed' : this.#problem;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#pendingTimer);
    this.#jobWatch.close();
    this.#podWatch.close();
    await Promise.all([...this.#jobs.values()].map((t) => t.chain));
  }

  // ---- tracking ----

  #track(localId: string, jobId: string, lrmsDir: string): Tracked {
    const t: Tracked = {
      localId,
      jobId,
      lrmsDir,
      cancelled: false,
      done: false,
      recovered: false,
      chain: Promise.resolve(),
    };
    this.#jobs.set(localId, t);
    return t;
  }

  #deliver(t: Tracked, update: BatchUpdate): void {
    if (this.#closed) return;
    t.chain = t.chain.then(async () => {
      if (!this.#closed) await this.#listener(t.localId, update);
    });
  }

  #state(t: Tracked, state: 'QUEUING' | 'RUNNING' | 'OTHER', native: string): void {
    const key = `${state}/${native}`;
    if (t.done || t.lastState === key) return;
    t.lastState = key;
    this.#deliver(t, { kind: 'state', jobId: t.jobId, state, native });
  }

  #finish(t: Tracked, failureReason?: string): void {
    if (t.done) return;
    t.done = true;
    const v = t.pod ? podView(t.pod) : undefined;
    const reason = t.cancelled ? 'cancelled' : failureReason;
    const base: BatchResult = {
      exitCode: v?.exitCode ?? null,
      ...(v?.signal !== undefined ? { signal: v.signal } : {}),
      wallTimeSeconds: v?.wallTimeSeconds ?? 0,
      cpuTimeSeconds: 0,
      userTimeSeconds: 0,
      kernelTimeSeconds: 0,
      maxRssBytes: 0,
      startTime: v?.startTime ?? null,
      endTime: v?.endTime ?? null,
      nodes: v?.node !== undefined ? [v.node] : [],
      ...(reason !== undefined
        ? { failureReason: reason }
        : v?.oomKilled === true
          ? { failureReason: 'memory limit exceeded' }
          : {}),
    };
    const pod = t.pod?.metadata?.name;
    t.chain = t.chain.then(async () => {
      const log = pod !== undefined ? await this.#saveLog(t, pod) : '';
      // The shell line's own word that the executable is missing (exit 127 alone could be the job's).
      const missing = base.exitCode === 127 ? log.split('\n').find((l) => l.startsWith(MISSING_EXECUTABLE)) : undefined;
      const result: BatchResult =
        missing !== undefined && base.failureReason === undefined
          ? { ...base, failureReason: `executable not found: ${missing.slice(MISSING_EXECUTABLE.length)}` }
          : base;
      await writeDiag(t.lrmsDir, result).catch((e: unknown) =>
        this.#log('warn', `diag of ${t.localId}: ${describe(e)}`),
      );
      if (!this.#closed) await this.#listener(t.localId, { kind: 'final', jobId: t.jobId, result });
      this.#jobs.delete(t.localId);
    });
  }

  #jobList(items: readonly V1Job[]): void {
    const seen = new Set(items.map((j) => j.metadata?.name ?? ''));
    for (const j of items) this.#jobEvent('MODIFIED', j);
    for (const t of this.#jobs.values()) {
      if (!seen.has(t.localId) && t.job !== undefined) this.#jobGone(t);
    }
    // A recovered job whose Job no longer exists (and was never seen by this instance).
    for (const t of this.#jobs.values())
      if (!seen.has(t.localId) && t.job === undefined && t.recovered) this.#jobGone(t);
  }

  #jobEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', job: V1Job): void {
    const t = this.#jobs.get(job.metadata?.name ?? '');
    if (!t) return;
    t.job = job;
    if (type === 'DELETED') return this.#jobGone(t);
    const end = job.status?.conditions?.find(
      (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
    );
    if (!end) return;
    // The pod's terminated state may come after the Job's condition: the pod watch finishes then.
    if (end.reason === 'DeadlineExceeded') return this.#finish(t, 'wall time limit exceeded');
    if (t.pod && podView(t.pod).ended) this.#finish(t);
  }

  #jobGone(t: Tracked): void {
    if (t.done) return;
    if (t.cancelled) return this.#finish(t);
    const ended = t.job?.status?.conditions?.some(
      (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
    );
    if (ended && t.pod && podView(t.pod).ended) return this.#finish(t);
    this.#finish(t, 'job lost: its Kubernetes Job was deleted outside Ceres');
  }

  #podEvent(type: 'ADDED' | 'MODIFIED' | 'DELETED', pod: V1Pod): void {
    const podName = pod.metadata?.name ?? '';
    if (type === 'DELETED') this.#pods.delete(podName);
    else this.#pods.set(podName, pod);
    const owner = pod.metadata?.labels?.['batch.kubernetes.io/job-name'] ?? pod.metadata?.labels?.['job-name'] ?? '';
    const t = this.#jobs.get(owner);
    if (!t || t.done) return;
    // An evicted pod's replacement is newer; the old one's last events must not win over it.
    if (t.pod && t.pod.metadata?.name !== pod.metadata?.name && older(pod, t.pod)) return;
    t.pod = pod;
    if (type === 'DELETED') return;
    const v = podView(pod);
    if (v.disrupted) return this.#state(t, 'QUEUING', 'DisruptionTarget');
    if (v.ended) {
      const jobEnded = t.job?.status?.conditions?.some(
        (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
      );
      if (jobEnded === true || t.cancelled) this.#finish(t);
      return;
    }
    if (v.phase === 'Running') {
      t.pendingSince = undefined;
      return this.#state(t, 'RUNNING', 'Running');
    }
    if (v.stuck !== undefined) t.pendingSince ??= Date.now();
    else t.pendingSince = undefined;
    this.#state(t, 'QUEUING', v.stuck?.reason ?? 'Pending');
    if (v.stuck?.reason === 'Unschedulable') void this.#neverSchedulable(t, pod, v.stuck.message);
  }

  /**
   * An Unschedulable pod that no schedulable node could ever hold: delete its Job and fail the
   * job now with Kubernetes's reason. Decided on the node list; one unknown or older than
   * NODES_FRESH_MS is listed again first (one list at a time for all pods), so a node added
   * since the last list is not missed. A pod that only waits for room stays for the timeout.
   */
  async #neverSchedulable(t: Tracked, pod: V1Pod, message: string): Promise<void> {
    // The same pod, still unschedulable, its job not ended meanwhile.
    const still = (): boolean =>
      !t.done &&
      !t.cancelled &&
      t.pod !== undefined &&
      t.pod.metadata?.uid === pod.metadata?.uid &&
      podView(t.pod).stuck?.reason === 'Unschedulable';
    if (this.#nodes !== undefined && fitsNoNode(this.#nodes, pod) === undefined) return;
    if (this.#nodes === undefined || Date.now() - this.#nodesAskedAt > NODES_FRESH_MS) await this.refreshClusterInfo();
    const why = this.#nodes !== undefined ? fitsNoNode(this.#nodes, pod) : undefined;
    if (why === undefined || !still()) return;
    this.#finish(t, `kubernetes: Unschedulable: ${message} (${why})`);
    await this.#delete(t).catch((e: unknown) => this.#log('warn', `deleting Job ${t.localId}: ${describe(e)}`));
  }

  /** Pods stuck on their image or on scheduling past the timeout: delete the Job, fail with the reason. */
  #checkPending(): void {
    const now = Date.now();
    for (const t of this.#jobs.values()) {
      if (t.done || t.pendingSince === undefined || t.cancelled || !t.pod) continue;
      if (now - t.pendingSince < this.#o.pendingTimeoutMs) continue;
      const stuck = podView(t.pod).stuck;
      if (!stuck) continue;
      this.#finish(t, `kubernetes: ${stuck.reason}: ${stuck.message}`);
      void this.#delete(t).catch((e: unknown) => this.#log('warn', `deleting Job ${t.localId}: ${describe(e)}`));
    }
  }

  /** Delete with propagationPolicy Background; the Job's DELETED event confirms it. */
  async #delete(t: Tracked): Promise<void> {
    try {
      await this.#retry(`delete Job ${t.localId}`, () =>
        this.#batch.deleteNamespacedJob({
          name: t.localId,
          namespace: this.#o.namespace,
          propagationPolicy: 'Background',
        }),
      );
    } catch (e) {
      if (apiStatus(e) === 404) return this.#jobGone(t);
      throw ceError('CE_ERR_LRMS_UNAVAILABLE', `Kubernetes did not delete Job ${t.localId}: ${describe(e)}`);
    }
  }

  /** The pod's log (what the container wrote outside the job's own files) into `pod.log` of the lrms directory. */
  async #saveLog(t: Tracked, pod: string): Promise<string> {
    try {
      const text = await this.#core.readNamespacedPodLog({ name: pod, namespace: this.#o.namespace, container: 'job' });
      await writeFile(join(t.lrmsDir, 'pod.log'), text);
      return text;
    } catch (e) {
      this.#log('info', `no log of pod ${pod}: ${describe(e)}`);
      return '';
    }
  }

  async #throttle(): Promise<void> {
    const gap = 1000 / this.#o.createPerSecond;
    const now = Date.now();
    const at = Math.max(now, this.#nextCreate);
    this.#nextCreate = at + gap;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }

  async #retry<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let wait = this.#o.backoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const r = await fn();
        this.#problem = undefined;
        return r;
      } catch (e) {
        if (!retriable(e) || attempt >= this.#o.requestAttempts || this.#closed) throw e;
        this.#log('warn', `${what}: ${describe(e)}; attempt ${attempt + 1} in ${wait} ms`);
        await new Promise((r) => setTimeout(r, wait));
        wait = Math.min(wait * 2, 30_000);
      }
    }
  }

  #log(level: 'info' | 'warn', msg: string): void {
    if (level === 'warn') this.#o.log?.warn({ backend: 'kubernetes' }, msg);
    else this.#o.log?.info?.({ backend: 'kubernetes' }, msg);
  }
}

function older(a: V1Pod, b: V1Pod): boolean {
  const ta = new Date(a.metadata?.creationTimestamp ?? 0).getTime();
  const tb = new Date(b.metadata?.creationTimestamp ?? 0).getTime();
  return ta < tb;
}

function describe(e: unknown): string {
  const code = apiStatus(e);
  const body = (e as { body?: unknown }).body;
  let message = e instanceof Error ? e.message : String(e);
  if (typeof body === 'string') {
    try {
      const s = JSON.parse(body) as { message?: string };
      if (s.message) message = s.message;
    } catch {
      // not a Status object: keep the error's own message
    }
  }
  return code !== undefined ? `HTTP ${code}: ${message}` : message;
}
