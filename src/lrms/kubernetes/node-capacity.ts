/**
 * The info document's figures for a Kubernetes site (docs/batch-backends.md, "Kubernetes"):
 * capacity from the nodes the API server lists, job counts from the pods Ceres made.
 *
 * - A node counts towards the slots when it is Ready and schedulable (`spec.unschedulable`
 *   is a cordon); its slots are its allocatable CPUs, whole ones only (a pod of one slot asks
 *   for one CPU, so 3.92 allocatable CPUs hold 3 such pods).
 * - Free slots are a node's slots less the CPU requests of the unfinished Ceres pods bound to
 *   it. Pods of other workloads are not listed (the service may only read its namespace), so
 *   the figure is an upper bound, as a broker reads it anyway.
 * - Every configured queue runs on the same nodes (a queue is an image here, not a partition),
 *   so each has the whole cluster's figures and its own counts of running and waiting pods.
 * - One execution environment: the largest node's CPUs and memory (what one job can have at
 *   most), the platform when every node has the same architecture.
 * - A pod cannot span nodes: a queue's most slots per job (GLUE2 MaxSlotsPerJob, and the limit
 *   a submission is checked against) are the whole allocatable CPUs of the largest Ready,
 *   schedulable node, not the cluster's total; the most memory of one job (memory per slot
 *   times slots) is the largest such node's allocatable memory. Those two may be two nodes'
 *   (one has the CPUs, another the memory): the pairs of every such node (`nodeShapes`) are
 *   published too, and a submission must fit one of them with both at once.
 */
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { BatchClusterInfo, BatchExecutionEnvironment, NodeShape } from '../backend.js';
import { parseQuantity } from './quantity.js';

/** The label naming the queue a pod was submitted to (job-manifest.ts sets it). */
export const QUEUE_LABEL = 'ceres.grid/queue';

/** Kubernetes's `status.nodeInfo.architecture` (GOARCH) to GLUE2 Platform, as host-facts.ts maps Node's. */
const PLATFORM: Readonly<Record<string, string>> = {
  amd64: 'amd64',
  arm64: 'aarch64',
  ppc64le: 'ppc64le',
  s390x: 's390x',
  '386': 'i686',
  riscv64: 'riscv64',
};

function ready(n: V1Node): boolean {
  return (
    n.spec?.unschedulable !== true &&
    n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true
  );
}

function slotsOf(n: V1Node): number {
  return Math.floor(parseQuantity(n.status?.allocatable?.['cpu']) ?? 0);
}

function unfinished(p: V1Pod): boolean {
  return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && p.metadata?.deletionTimestamp === undefined;
}

/** What a pod asks for of `resource`: the sum of its containers' requests (a limit alone is the request). */
function request(p: V1Pod, resource: 'cpu' | 'memory'): number {
  let sum = 0;
  for (const c of p.spec?.containers ?? [])
    sum += parseQuantity(c.resources?.requests?.[resource] ?? c.resources?.limits?.[resource]) ?? 0;
  return sum;
}

const cpuRequest = (p: V1Pod): number => request(p, 'cpu');

/**
 * What one pod can have on each Ready, schedulable node: its whole CPUs and its memory, the
 * nodes that another exceeds (or equals) in both left out; most CPUs first (so also least
 * memory first). Empty: no such node.
 */
export function nodeShapes(nodes: readonly V1Node[]): NodeShape[] {
  const all = nodes
    .filter(ready)
    .map((n) => ({ slots: slotsOf(n), memoryBytes: Math.floor(parseQuantity(n.status?.allocatable?.['memory']) ?? 0) }))
    .sort((a, b) => b.slots - a.slots || b.memoryBytes - a.memoryBytes);
  const kept: NodeShape[] = [];
  for (const s of all) if (s.memoryBytes > (kept.at(-1)?.memoryBytes ?? -1)) kept.push(s);
  return kept;
}

/**
 * Why no Ready, schedulable node of `nodes` could ever hold `pod`, even empty: it asks for more
 * CPUs or memory than any one node's allocatable (a pod cannot span nodes); undefined when one
 * could (a pod that waits for room, not for a node that does not exist). Only CPU and memory
 * are weighed: taints and selectors are Kubernetes's own to explain.
 */
export function fitsNoNode(nodes: readonly V1Node[], pod: V1Pod): string | undefined {
  const cpu = request(pod, 'cpu');
  const memory = request(pod, 'memory');
  const usable = nodes.filter(ready);
  const fits = (n: V1Node): boolean =>
    cpu <= (parseQuantity(n.status?.allocatable?.['cpu']) ?? 0) &&
    memory <= (parseQuantity(n.status?.allocatable?.['memory']) ?? 0);
  if (usable.some(fits)) return undefined;
  if (usable.length === 0) return 'no node is Ready and schedulable';
  const most = (r: 'cpu' | 'memory'): number =>
    Math.max(...usable.map((n) => parseQuantity(n.status?.allocatable?.[r]) ?? 0));
  return cpu > most('cpu')
    ? `it asks for ${cpu} CPUs, the largest schedulable node has ${most('cpu')}`
    : `it asks for ${memory} bytes of memory, the largest schedulable node has ${most('memory')}`;
}

function executionEnvironment(nodes: readonly V1Node[]): BatchExecutionEnvironment {
  let cpus = 0;
  let memory = 0;
  for (const n of nodes) {
    cpus = Math.max(cpus, slotsOf(n));
    memory = Math.max(memory, parseQuantity(n.status?.allocatable?.['memory']) ?? 0);
  }
  const arches = new Set(nodes.map((n) => n.status?.nodeInfo?.architecture ?? ''));
  const [arch] = arches;
  const platform = arches.size === 1 && arch !== undefined ? PLATFORM[arch] : undefined;
  const systems = new Set(nodes.map((n) => n.status?.nodeInfo?.operatingSystem ?? ''));
  const [os] = systems;
  return {
    ...(cpus > 0 ? { logicalCpus: cpus } : {}),
    ...(memory > 0 ? { mainMemoryBytes: Math.floor(memory) } : {}),
    ...(platform !== undefined ? { platform } : {}),
    ...(systems.size === 1 && os === 'linux' ? { osFamily: 'linux' } : {}),
  };
}

export function clusterFromNodes(
  nodes: readonly V1Node[],
  pods: readonly V1Pod[],
  queues: readonly string[],
): BatchClusterInfo {
  const usable = nodes.filter(ready);
  const used = new Map<string, number>();
  for (const p of pods) {
    const node = p.spec?.nodeName;
    if (node !== undefined && unfinished(p)) used.set(node, (used.get(node) ?? 0) + cpuRequest(p));
  }
  let totalSlots = 0;
  let freeSlots = 0;
  for (const n of nodes) totalSlots += slotsOf(n);
  for (const n of usable) freeSlots += Math.max(0, Math.floor(slotsOf(n) - (used.get(n.metadata?.name ?? '') ?? 0)));
  const ee = executionEnvironment(nodes);
  const largestNodeMemoryBytes = ee.mainMemoryBytes;
  const shapes = nodeShapes(nodes);
  const most = {
    slots: Math.max(0, ...shapes.map((s) => s.slots)),
    memory: Math.max(0, ...shapes.map((s) => s.memoryBytes)),
  };
  return {
    totalSlots,
    freeSlots,
    totalNodes: nodes.length,
    executionEnvironment: ee,
    queues: queues.map((name) => {
      const mine = pods.filter((p) => p.metadata?.labels?.[QUEUE_LABEL] === name && unfinished(p));
      const running = mine.filter((p) => p.status?.phase === 'Running').length;
      return {
        name,
        up: usable.length > 0,
        totalSlots,
        freeSlots,
        ...(largestNodeMemoryBytes !== undefined ? { largestNodeMemoryBytes } : {}),
        ...(most.slots > 0 ? { maxSlotsPerJob: most.slots } : {}),
        ...(most.memory > 0 ? { maxJobMemoryBytes: most.memory } : {}),
        ...(shapes.length > 0 ? { nodeShapes: shapes } : {}),
        runningJobs: running,
        waitingJobs: mine.length - running,
      };
    }),
  };
}
