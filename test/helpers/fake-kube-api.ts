/**
 * A fake Kubernetes API server for the Kubernetes backend's tests: no real API server can run
 * on the test machines. It speaks HTTPS with a bearer token and answers with objects typed by
 * the official client library's models (V1Job, V1Pod, V1Status), shaped as the public API
 * reference describes them, for the few paths the backend uses: Jobs (create, get, list,
 * watch, delete with a propagation policy), Pods (list, watch, logs), Nodes (list: `fakeNode`
 * builds them as a kubelet registers and reports its node).
 *
 * Its "kubelet" runs each pod's one container as a local process (command, args, env,
 * workingDir, runAsUser/runAsGroup when root) so that jobs write real files in the session
 * directory, and replays the transitions a cluster makes: Pending (unschedulable, image pull
 * back-off), Running, Succeeded/Failed with terminated.exitCode, eviction (DisruptionTarget,
 * then a replacement pod, as a pod failure policy with Ignore asks), the Job's
 * activeDeadlineSeconds (condition Failed, reason DeadlineExceeded), deletion (the Job at
 * once, its pods after). Every change bumps a resourceVersion and is kept as a watch event;
 * `compact()` forgets the history so that a watch from an older version gets 410 Gone.
 */
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants as osConstants } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { parseQuantity } from '../../src/lrms/kubernetes/quantity.js';
import { x509 } from '../../src/pki/x509-lib.js';
import type { V1Job, V1Node, V1Pod, V1Status, V1PodCondition, V1ContainerStatus } from '@kubernetes/client-node';
import { makeCa, makeUser, type TestCred } from './pki.js';

type Kind = 'Job' | 'Pod';
interface Event {
  readonly rv: number;
  readonly kind: Kind;
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: V1Job | V1Pod;
}

export interface FakeKubeOptions {
  /** Images whose pull fails: their pods stay Pending with ErrImagePull, then ImagePullBackOff. */
  readonly badImages?: readonly string[];
  /** CPUs of the one node; a pod asking more is Unschedulable. */
  readonly nodeCpus?: number;
}

const NODE = 'fake-node-1';
const clone = <T>(o: T): T => structuredClone(o);

export class FakeKubeApi {
  readonly token = randomBytes(16).toString('hex');
  /** A token the server knows but whose account may do nothing (403). */
  readonly forbiddenToken = randomBytes(16).toString('hex');
  ca!: TestCred;
  url = '';
  /** Requests seen, as `METHOD path?query` (tests count creations, lists and deletions). */
  readonly requests: string[] = [];
  readonly #jobs = new Map<string, V1Job>();
  readonly #pods = new Map<string, V1Pod>();
  readonly #procs = new Map<string, ChildProcess>();
  readonly #logs = new Map<string, string>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #events: Event[] = [];
  #rv = 100;
  /** Oldest version a watch may resume from; older ones get 410 Gone. */
  #oldest = 100;
  #watchers = new Set<{ kind: Kind; selector: string; res: ServerResponse }>();
  #server?: https.Server;
  #sockets = new Set<Socket>();
  #port = 0;
  #cert!: TestCred;
  readonly #badImages: Set<string>;
  readonly #nodeCpus: number;
  #nodes: V1Node[];

  constructor(o: FakeKubeOptions = {}) {
    this.#badImages = new Set(o.badImages ?? []);
    this.#nodeCpus = o.nodeCpus ?? 8;
    this.#nodes = [fakeNode(NODE, { cpu: String(this.#nodeCpus) })];
  }

  /** The nodes `GET /api/v1/nodes` lists from now on (the kubelet still runs pods as one node). */
  setNodes(nodes: readonly V1Node[]): void {
    this.#nodes = nodes.map(clone);
  }

  static async start(o: FakeKubeOptions = {}): Promise<FakeKubeApi> {
    const f = new FakeKubeApi(o);
    f.ca = await makeCa({ dn: '/CN=fake kubernetes CA' });
    f.#cert = await makeUser(f.ca, {
      dn: '/CN=kube-apiserver',
      eku: [x509.ExtendedKeyUsage.serverAuth],
      extra: [new x509.SubjectAlternativeNameExtension([{ type: 'ip', value: '127.0.0.1' }])],
    });
    await f.up();
    return f;
  }

  /** Start answering (again, on the same port after `down`). */
  async up(): Promise<void> {
    const server = https.createServer({ cert: this.#cert.pem, key: this.#cert.keyPem }, (req, res) => {
      this.#handle(req, res).catch((e: unknown) => this.#status(res, 500, 'InternalError', String(e)));
    });
    server.on('connection', (s: Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => resolve());
    });
    this.#port = (server.address() as { port: number }).port;
    this.url = `https://127.0.0.1:${this.#port}`;
    this.#server = server;
  }

  /** Stop answering: every connection, watches included, is cut (the API server is down). Jobs go on. */
  async down(): Promise<void> {
    const s = this.#server;
    this.#server = undefined;
    this.#watchers.clear();
    for (const sock of this.#sockets) sock.destroy();
    if (s) await new Promise<void>((r) => s.close(() => r()));
  }

  async close(): Promise<void> {
    for (const t of this.#timers) clearTimeout(t);
    for (const p of this.#procs.values()) killGroup(p);
    await this.down();
  }

  /** Forget the event history (as etcd compaction does): a watch from an older version gets 410 Gone. */
  compact(): void {
    this.#events = [];
    this.#oldest = this.#rv;
  }

  /** End every open watch, as the API server does at its watch timeout. */
  endWatches(): void {
    for (const w of this.#watchers) w.res.end();
    this.#watchers.clear();
  }

  jobs(): V1Job[] {
    return [...this.#jobs.values()].map(clone);
  }
  pods(): V1Pod[] {
    return [...this.#pods.values()].map(clone);
  }

  /** Delete a Job behind the client's back (an operator's kubectl delete). */
  deleteJob(name: string): void {
    const job = this.#jobs.get(name);
    if (job) this.#removeJob(job);
  }

  /** Evict the running pod of a Job (a node drain through the Eviction API). */
  evict(jobName: string): boolean {
    const pod = [...this.#pods.values()].find(
      (p) => p.metadata?.labels?.['job-name'] === jobName && !p.metadata?.deletionTimestamp,
    );
    if (!pod || pod.status?.phase !== 'Running') return false;
    this.#condition(pod, {
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'EvictionByEvictionAPI',
      message: 'Eviction API: evicting',
    });
    this.#deletePod(pod, 'Failed');
    const job = this.#jobs.get(jobName);
    // The pod failure policy's Ignore rule: the Job makes a new pod, not counted against backoffLimit.
    if (job && job.spec?.podFailurePolicy?.rules.some((r) => r.action === 'Ignore'))
      this.#later(50, () => this.#newPod(job));
    return true;
  }

  // ---- HTTP ----

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://x');
    this.requests.push(`${req.method} ${url.pathname}${url.search}`);
    const auth = req.headers.authorization ?? '';
    if (auth === `Bearer ${this.forbiddenToken}`) {
      return this.#status(
        res,
        403,
        'Forbidden',
        `jobs.batch is forbidden: User "system:serviceaccount:ceres:ceres" cannot ${req.method} in the namespace`,
      );
    }
    if (auth !== `Bearer ${this.token}`) return this.#status(res, 401, 'Unauthorized', 'Unauthorized');
    const body = req.method === 'POST' ? await readBody(req) : undefined;
    if (url.pathname === '/api/v1/nodes' && req.method === 'GET') {
      return send(res, 200, {
        apiVersion: 'v1',
        kind: 'NodeList',
        metadata: { resourceVersion: String(this.#rv) },
        items: this.#nodes.map(clone),
      });
    }
    const m = /^\/(apis\/batch\/v1|api\/v1)\/namespaces\/([a-z0-9-]+)\/(jobs|pods)(?:\/([a-z0-9.-]+))?(\/log)?$/.exec(
      url.pathname,
    );
    if (!m) return this.#status(res, 404, 'NotFound', `the server could not find the requested resource`);
    const [, , ns, plural, name, log] = m as unknown as [string, string, string, 'jobs' | 'pods', string?, string?];
    const kind: Kind = plural === 'jobs' ? 'Job' : 'Pod';
    const store = kind === 'Job' ? this.#jobs : this.#pods;
    if (name === undefined && req.method === 'GET') {
      const selector = url.searchParams.get('labelSelector') ?? '';
      if (url.searchParams.get('watch') === '1' || url.searchParams.get('watch') === 'true') {
        return this.#watch(kind, selector, Number(url.searchParams.get('resourceVersion') ?? this.#rv), res);
      }
      const items = [...store.values()].filter((o) => matches(o, selector)).map(clone);
      return send(res, 200, {
        apiVersion: kind === 'Job' ? 'batch/v1' : 'v1',
        kind: `${kind}List`,
        metadata: { resourceVersion: String(this.#rv) },
        items,
      });
    }
    if (name === undefined && req.method === 'POST' && kind === 'Job') {
      const job = JSON.parse(body ?? '{}') as V1Job;
      const jn = job.metadata?.name ?? '';
      if (this.#jobs.has(jn)) return this.#status(res, 409, 'AlreadyExists', `jobs.batch "${jn}" already exists`);
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(jn) || jn.length > 63) {
        return this.#status(res, 422, 'Invalid', `Job.batch "${jn}" is invalid: metadata.name: Invalid value`);
      }
      const created = this.#createJob(job, ns);
      return send(res, 201, created);
    }
    const obj = name === undefined ? undefined : store.get(name);
    if (!obj)
      return this.#status(res, 404, 'NotFound', `${plural}${kind === 'Job' ? '.batch' : ''} "${name ?? ''}" not found`);
    if (req.method === 'GET' && log) return sendText(res, this.#logs.get(name ?? '') ?? '');
    if (req.method === 'GET') return send(res, 200, clone(obj));
    if (req.method === 'DELETE' && kind === 'Job') {
      this.#removeJob(obj as V1Job);
      return send(res, 200, {
        apiVersion: 'v1',
        kind: 'Status',
        status: 'Success',
        details: { name, group: 'batch', kind: 'jobs' },
      });
    }
    return this.#status(
      res,
      405,
      'MethodNotAllowed',
      'the server does not allow this method on the requested resource',
    );
  }

  #status(res: ServerResponse, code: number, reason: string, message: string): void {
    const s: V1Status = { apiVersion: 'v1', kind: 'Status', metadata: {}, status: 'Failure', message, reason, code };
    send(res, code, s);
  }

  #watch(kind: Kind, selector: string, from: number, res: ServerResponse): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    if (from < this.#oldest) {
      // What the API server sends for a compacted version: an ERROR event carrying a 410 Status.
      const gone: V1Status = {
        apiVersion: 'v1',
        kind: 'Status',
        metadata: {},
        status: 'Failure',
        message: `too old resource version: ${from} (${this.#oldest})`,
        reason: 'Expired',
        code: 410,
      };
      res.end(JSON.stringify({ type: 'ERROR', object: gone }) + '\n');
      return;
    }
    for (const e of this.#events) if (e.kind === kind && e.rv > from && matches(e.object, selector)) res.write(line(e));
    const w = { kind, selector, res };
    this.#watchers.add(w);
    res.on('close', () => this.#watchers.delete(w));
  }

  // ---- cluster ----

  #emit(kind: Kind, type: Event['type'], obj: V1Job | V1Pod): void {
    this.#rv += 1;
    obj.metadata = { ...obj.metadata, resourceVersion: String(this.#rv) };
    const e: Event = { rv: this.#rv, kind, type, object: clone(obj) };
    this.#events.push(e);
    for (const w of this.#watchers) if (w.kind === kind && matches(e.object, w.selector)) w.res.write(line(e));
  }

  #later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.#timers.delete(t);
      fn();
    }, ms);
    this.#timers.add(t);
  }

  #createJob(job: V1Job, ns: string): V1Job {
    const name = job.metadata?.name ?? '';
    const uid = crypto.randomUUID();
    const created: V1Job = {
      ...clone(job),
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { ...job.metadata, name, namespace: ns, uid, creationTimestamp: new Date() },
      status: { active: 0, startTime: new Date() },
    };
    this.#jobs.set(name, created);
    this.#emit('Job', 'ADDED', created);
    this.#later(20, () => this.#newPod(created));
    const deadline = created.spec?.activeDeadlineSeconds;
    if (deadline !== undefined) this.#later(deadline * 1000, () => this.#deadline(name));
    return clone(created);
  }

  #newPod(job: V1Job): void {
    const jobName = job.metadata?.name ?? '';
    if (this.#jobs.get(jobName) !== job) return;
    const tpl = job.spec?.template;
    const pod: V1Pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        ...tpl?.metadata,
        name: `${jobName}-${randomBytes(3).toString('hex').slice(0, 5)}`,
        namespace: job.metadata?.namespace ?? '',
        uid: crypto.randomUUID(),
        creationTimestamp: new Date(),
        labels: {
          ...tpl?.metadata?.labels,
          'batch.kubernetes.io/job-name': jobName,
          'job-name': jobName,
          'controller-uid': job.metadata?.uid ?? '',
        },
        ownerReferences: [
          { apiVersion: 'batch/v1', kind: 'Job', name: jobName, uid: job.metadata?.uid ?? '', controller: true },
        ],
      },
      spec: clone(tpl?.spec ?? { containers: [] }),
      status: { phase: 'Pending', conditions: [], qosClass: 'Burstable' },
    };
    this.#pods.set(pod.metadata?.name ?? '', pod);
    job.status = { ...job.status, active: 1 };
    this.#emit('Job', 'MODIFIED', job);
    this.#emit('Pod', 'ADDED', pod);
    this.#later(20, () => this.#schedule(pod));
  }

  #schedule(pod: V1Pod): void {
    if (!this.#live(pod)) return;
    const c = pod.spec?.containers[0];
    const cpu = Number(String(c?.resources?.requests?.['cpu'] ?? '0').replace(/m$/, 'e-3'));
    // The kubelet's node has the memory fake-node-1 is listed with (fakeNode's default when not listed).
    const listed = this.#nodes.find((n) => n.metadata?.name === NODE)?.status?.allocatable?.['memory'];
    const memory = parseQuantity(c?.resources?.requests?.['memory'] ?? '0') ?? 0;
    const short = cpu > this.#nodeCpus ? 'cpu' : memory > (parseQuantity(listed ?? '16215976Ki') ?? 0) ? 'memory' : '';
    if (short !== '') {
      this.#condition(pod, {
        type: 'PodScheduled',
        status: 'False',
        reason: 'Unschedulable',
        message: `0/1 nodes are available: 1 Insufficient ${short}. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.`,
      });
      return this.#emit('Pod', 'MODIFIED', pod);
    }
    pod.spec = { ...pod.spec!, nodeName: NODE };
    this.#condition(pod, { type: 'PodScheduled', status: 'True' });
    this.#container(pod, { waiting: { reason: 'ContainerCreating' } }, false);
    this.#emit('Pod', 'MODIFIED', pod);
    if (this.#badImages.has(c?.image ?? '')) {
      this.#later(20, () => {
        if (!this.#live(pod)) return;
        this.#container(
          pod,
          {
            waiting: {
              reason: 'ErrImagePull',
              message: `failed to pull and unpack image "${c?.image ?? ''}": not found`,
            },
          },
          false,
        );
        this.#emit('Pod', 'MODIFIED', pod);
        this.#later(50, () => {
          if (!this.#live(pod)) return;
          this.#container(
            pod,
            { waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c?.image ?? ''}"` } },
            false,
          );
          this.#emit('Pod', 'MODIFIED', pod);
        });
      });
      return;
    }
    this.#later(20, () => this.#run(pod));
  }

  #run(pod: V1Pod): void {
    if (!this.#live(pod)) return;
    const c = pod.spec!.containers[0]!;
    const sc = pod.spec?.securityContext;
    const asRoot = process.getuid?.() === 0;
    const [cmd, ...args] = [...(c.command ?? []), ...(c.args ?? [])];
    const name = pod.metadata?.name ?? '';
    const proc = spawn(cmd ?? '/bin/false', args, {
      cwd: c.workingDir ?? '/',
      env: Object.fromEntries((c.env ?? []).map((e) => [e.name, e.value ?? ''])),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: ending the container ends every process in it, as its PID namespace does.
      detached: true,
      ...(asRoot && sc?.runAsUser !== undefined ? { uid: sc.runAsUser, gid: sc.runAsGroup ?? sc.runAsUser } : {}),
    });
    this.#procs.set(name, proc);
    this.#logs.set(name, '');
    const log = (d: Buffer): void => void this.#logs.set(name, (this.#logs.get(name) ?? '') + d.toString('utf8'));
    proc.stdout?.on('data', log);
    proc.stderr?.on('data', log);
    const startedAt = new Date();
    proc.on('error', (e) => log(Buffer.from(`exec: ${e.message}\n`)));
    // The container's memory cgroup: past limits.memory the kernel's OOM killer ends it (SIGKILL),
    // and the kubelet reports the container terminated with reason OOMKilled, exit code 137.
    const memoryLimit = parseQuantity(c.resources?.limits?.['memory']);
    let oom = false;
    const watchMemory =
      memoryLimit === undefined || proc.pid === undefined
        ? undefined
        : setInterval(() => {
            if (groupRss(proc.pid!) <= memoryLimit) return;
            oom = true;
            killGroup(proc);
          }, 50);
    pod.status = { ...pod.status, phase: 'Running', startTime: startedAt, hostIP: '127.0.0.1', podIP: '127.0.0.1' };
    this.#condition(pod, { type: 'Ready', status: 'True' });
    this.#container(pod, { running: { startedAt } }, true);
    this.#emit('Pod', 'MODIFIED', pod);
    proc.on('close', (code, signal) => {
      clearInterval(watchMemory);
      this.#procs.delete(name);
      if (!this.#live(pod)) return;
      // As a container runtime reports it: death by signal n is exit code 128 + n.
      const exitCode = code ?? 128 + (signal !== null ? osConstants.signals[signal] : 9);
      this.#container(
        pod,
        {
          terminated: {
            exitCode,
            reason: oom ? 'OOMKilled' : exitCode === 0 ? 'Completed' : 'Error',
            startedAt,
            finishedAt: new Date(),
          },
        },
        false,
      );
      pod.status = { ...pod.status, phase: exitCode === 0 ? 'Succeeded' : 'Failed' };
      this.#condition(pod, { type: 'Ready', status: 'False', reason: 'PodCompleted' });
      this.#emit('Pod', 'MODIFIED', pod);
      const job = this.#jobs.get(pod.metadata?.labels?.['job-name'] ?? '');
      if (!job || job.status?.conditions?.some((x) => x.status === 'True')) return;
      const ok = exitCode === 0;
      job.status = {
        ...job.status,
        active: 0,
        ...(ok ? { succeeded: 1, completionTime: new Date() } : { failed: 1 }),
        conditions: [
          {
            type: ok ? 'Complete' : 'Failed',
            status: 'True',
            reason: ok ? 'Completed' : 'BackoffLimitExceeded',
            message: ok ? 'Reached expected number of succeeded pods' : 'Job has reached the specified backoff limit',
            lastTransitionTime: new Date(),
            lastProbeTime: new Date(),
          },
        ],
      };
      this.#emit('Job', 'MODIFIED', job);
      this.#ttl(job);
    });
  }

  #deadline(name: string): void {
    const job = this.#jobs.get(name);
    if (!job || job.status?.conditions?.some((x) => x.status === 'True')) return;
    job.status = {
      ...job.status,
      active: 0,
      failed: 1,
      conditions: [
        {
          type: 'Failed',
          status: 'True',
          reason: 'DeadlineExceeded',
          message: 'Job was active longer than specified deadline',
          lastTransitionTime: new Date(),
          lastProbeTime: new Date(),
        },
      ],
    };
    this.#emit('Job', 'MODIFIED', job);
    for (const p of this.#podsOf(name)) this.#deletePod(p, 'Failed');
    this.#ttl(job);
  }

  #ttl(job: V1Job): void {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    if (ttl !== undefined) this.#later(ttl * 1000, () => this.#removeJob(job));
  }

  /** The Job goes at once; its pods after it, as the garbage collector deletes them (propagationPolicy Background). */
  #removeJob(job: V1Job): void {
    const name = job.metadata?.name ?? '';
    if (this.#jobs.get(name) !== job) return;
    this.#jobs.delete(name);
    this.#emit('Job', 'DELETED', job);
    this.#later(30, () => {
      for (const p of this.#podsOf(name)) this.#deletePod(p);
    });
  }

  #podsOf(jobName: string): V1Pod[] {
    return [...this.#pods.values()].filter((p) => p.metadata?.labels?.['job-name'] === jobName);
  }

  #deletePod(pod: V1Pod, phase?: 'Failed'): void {
    const name = pod.metadata?.name ?? '';
    if (!this.#live(pod)) return;
    pod.metadata = { ...pod.metadata, deletionTimestamp: new Date(), deletionGracePeriodSeconds: 30 };
    const proc = this.#procs.get(name);
    this.#procs.delete(name);
    if (proc) {
      killGroup(proc);
      const started = pod.status?.containerStatuses?.[0]?.state?.running?.startedAt;
      this.#container(
        pod,
        {
          terminated: {
            exitCode: 137,
            reason: 'Error',
            ...(started ? { startedAt: started } : {}),
            finishedAt: new Date(),
          },
        },
        false,
      );
    }
    if (phase) pod.status = { ...pod.status, phase };
    this.#emit('Pod', 'MODIFIED', pod);
    this.#later(20, () => {
      this.#pods.delete(name);
      this.#emit('Pod', 'DELETED', pod);
    });
  }

  #live(pod: V1Pod): boolean {
    return this.#pods.get(pod.metadata?.name ?? '') === pod && !pod.metadata?.deletionTimestamp;
  }

  #condition(pod: V1Pod, c: V1PodCondition): void {
    const rest = (pod.status?.conditions ?? []).filter((x) => x.type !== c.type);
    pod.status = { ...pod.status, conditions: [...rest, { lastTransitionTime: new Date(), ...c }] };
  }

  #container(pod: V1Pod, state: V1ContainerStatus['state'], ready: boolean): void {
    const c = pod.spec?.containers[0];
    const prev = pod.status?.containerStatuses?.[0];
    const s: V1ContainerStatus = {
      name: c?.name ?? 'job',
      image: c?.image ?? '',
      imageID: '',
      ready,
      restartCount: 0,
      started: state?.running !== undefined,
      ...(state ? { state } : {}),
      ...(prev?.state ? { lastState: {} } : {}),
    };
    pod.status = { ...pod.status, containerStatuses: [s] };
  }
}

/** Resident bytes of every process in the process group `pgid` (what a container's cgroup counts). */
function groupRss(pgid: number): number {
  let sum = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command's closing parenthesis: state, ppid, pgrp, ...
      const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
      if (pgrp !== pgid) continue;
      const pages = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
      sum += pages * 4096;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return sum;
}

function killGroup(p: ChildProcess): void {
  try {
    if (p.pid !== undefined) process.kill(-p.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function matches(o: V1Job | V1Pod, selector: string): boolean {
  if (selector === '') return true;
  const labels = o.metadata?.labels ?? {};
  return selector.split(',').every((term) => {
    const [k, v] = term.split('=');
    return v === undefined ? k! in labels : labels[k ?? ''] === v;
  });
}

const line = (e: Event): string => JSON.stringify({ type: e.type, object: e.object }) + '\n';

function send(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendText(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

export interface FakeNodeShape {
  /** Allocatable CPUs as the kubelet reports them (`4`, `3920m`); capacity is the whole CPUs above it. */
  readonly cpu: string;
  /** Allocatable memory (`16215976Ki`); capacity is 100 MiB more (the kubelet's reservation). */
  readonly memory?: string;
  readonly ready?: boolean;
  /** Cordoned (`kubectl cordon`): `spec.unschedulable` and its taint. */
  readonly unschedulable?: boolean;
  readonly architecture?: string;
}

/**
 * A V1Node as a kubelet registers and updates it (API reference, Node v1 core): labels of the
 * well-known kind, capacity and allocatable (allocatable is capacity less the reservations),
 * the four conditions with Ready last, addresses and nodeInfo.
 */
export function fakeNode(name: string, o: FakeNodeShape): V1Node {
  const memory = o.memory ?? '16215976Ki';
  const capacityMemory = `${Number(memory.replace(/Ki$/, '')) + 102400}Ki`;
  const arch = o.architecture ?? 'amd64';
  const at = new Date();
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: at,
    lastTransitionTime: at,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      uid: crypto.randomUUID(),
      resourceVersion: '1',
      creationTimestamp: at,
      labels: {
        'beta.kubernetes.io/arch': arch,
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': arch,
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: {
      podCIDR: '10.244.1.0/24',
      podCIDRs: ['10.244.1.0/24'],
      ...(o.unschedulable === true
        ? {
            unschedulable: true,
            taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', timeAdded: at }],
          }
        : {}),
    },
    status: {
      capacity: {
        cpu: String(Math.ceil(Number(o.cpu.replace(/m$/, 'e-3')))),
        'ephemeral-storage': '102626232Ki',
        'hugepages-2Mi': '0',
        memory: capacityMemory,
        pods: '110',
      },
      allocatable: { cpu: o.cpu, 'ephemeral-storage': '94580335255', 'hugepages-2Mi': '0', memory, pods: '110' },
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        o.ready === false
          ? condition('Ready', 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.')
          : condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: '127.0.0.1' },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: randomBytes(16).toString('hex'),
        systemUUID: crypto.randomUUID(),
        bootID: crypto.randomUUID(),
        kernelVersion: '6.1.0-18-amd64',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.7.13',
        kubeletVersion: 'v1.29.2',
        kubeProxyVersion: 'v1.29.2',
        operatingSystem: 'linux',
        architecture: arch,
      },
    },
  };
}
