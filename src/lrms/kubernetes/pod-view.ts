/**
 * What the backend reads from a pod's status (core/v1 PodStatus): its phase, its end (the one
 * container's terminated state), whether it is stuck pending for a reason Kubernetes names,
 * whether it was disrupted (condition DisruptionTarget: eviction, preemption, node drain).
 */
import type { V1Pod } from '@kubernetes/client-node';
import { constants } from 'node:os';

/** Waiting reasons that do not pass by themselves: the pending timeout fails the job on them. */
const STUCK_WAITING = new Set([
  'ErrImagePull',
  'ImagePullBackOff',
  'InvalidImageName',
  'ErrImageNeverPull',
  'CreateContainerConfigError',
  'CreateContainerError',
]);

export interface PodView {
  readonly phase: string;
  readonly ended: boolean;
  readonly exitCode: number | null;
  readonly signal?: string;
  readonly startTime: Date | null;
  readonly endTime: Date | null;
  readonly wallTimeSeconds: number;
  readonly node?: string;
  readonly disrupted: boolean;
  /** The kernel's OOM killer ended the container at its memory limit. */
  readonly oomKilled: boolean;
  readonly stuck?: { readonly reason: string; readonly message: string };
}

const signals = Object.entries(constants.signals);

export function podView(pod: V1Pod): PodView {
  const status = pod.status;
  const c = status?.containerStatuses?.[0];
  const term = c?.state?.terminated;
  const phase = status?.phase ?? 'Pending';
  const start = term?.startedAt ?? c?.state?.running?.startedAt;
  const startTime = start !== undefined ? new Date(start) : null;
  const endTime = term?.finishedAt !== undefined ? new Date(term.finishedAt) : null;
  const exitCode = term !== undefined ? term.exitCode : null;
  // A container runtime reports death by signal n as exit code 128 + n.
  const signal = exitCode !== null && exitCode > 128 ? signals.find(([, n]) => n === exitCode - 128)?.[0] : undefined;
  const unschedulable = status?.conditions?.find(
    (x) => x.type === 'PodScheduled' && x.status === 'False' && x.reason === 'Unschedulable',
  );
  const waiting = c?.state?.waiting;
  const stuck =
    waiting?.reason !== undefined && STUCK_WAITING.has(waiting.reason)
      ? { reason: waiting.reason, message: waiting.message ?? '' }
      : unschedulable
        ? { reason: 'Unschedulable', message: unschedulable.message ?? '' }
        : undefined;
  return {
    phase,
    ended: term !== undefined && (phase === 'Succeeded' || phase === 'Failed'),
    exitCode,
    ...(signal !== undefined ? { signal } : {}),
    startTime,
    endTime,
    wallTimeSeconds: startTime && endTime ? Math.max(0, (endTime.getTime() - startTime.getTime()) / 1000) : 0,
    ...(pod.spec?.nodeName !== undefined ? { node: pod.spec.nodeName } : {}),
    oomKilled: term?.reason === 'OOMKilled',
    disrupted: status?.conditions?.some((x) => x.type === 'DisruptionTarget' && x.status === 'True') === true,
    ...(stuck ? { stuck } : {}),
  };
}

/** The HTTP status of a failed API call (the client's ApiException carries it as `code`); undefined: no answer. */
export function apiStatus(e: unknown): number | undefined {
  const code = (e as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}
