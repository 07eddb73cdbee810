/**
 * Batch-system metrics: every operation the engine asks of the backend (submit,
 * cancel, recover, release) is timed and its failures counted, whatever the backend;
 * a backend that runs commands also reports each command through the observer.
 */
import type { BatchBackend } from '../lrms/backend.js';
import { timedCommand, type BatchCommandObserver } from '../lrms/core/command-observer.js';
import type { Metrics } from './instruments.js';

export function batchCommandObserver(m: Metrics, backend: string): BatchCommandObserver {
  return {
    observe(command, seconds, error) {
      m.batchSeconds.observe({ backend, command }, seconds);
      if (error !== undefined) m.batchErrors.inc({ backend, command });
    },
  };
}

/**
 * The same backend, its operations timed. Everything else (updates, cluster information,
 * health, methods added to the contract later) passes through untouched.
 */
export function timedBackend(b: BatchBackend, observer: BatchCommandObserver): BatchBackend {
  const timed: Partial<Record<keyof BatchBackend, unknown>> = {
    submit: (spec: Parameters<BatchBackend['submit']>[0]) => timedCommand(observer, 'submit', () => b.submit(spec)),
    recover: (jobs: Parameters<BatchBackend['recover']>[0]) => timedCommand(observer, 'recover', () => b.recover(jobs)),
    cancel: (localId: string) => timedCommand(observer, 'cancel', () => b.cancel(localId)),
    ...(b.release
      ? {
          release: (j: Parameters<NonNullable<BatchBackend['release']>>[0]) =>
            timedCommand(observer, 'release', () => b.release!(j)),
        }
      : {}),
  };
  return new Proxy(b, {
    get(target, key, receiver) {
      if (typeof key === 'string' && key in timed) return timed[key as keyof BatchBackend];
      const v: unknown = Reflect.get(target, key, receiver);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
