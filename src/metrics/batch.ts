/**
 * Batch-system metrics: every operation the engine asks of the backend (submit,
 * cancel, recover, release) is timed and its failures counted, whatever the backend;
 * a backend that runs commands also reports each command through the observer.
 */
import type { BatchBackend } from '../lrms/backend.js';
import { timedCommand, type BatchCommandObserver } from '../lrms/command-observer.js';
import type { CeresMetrics } from './registry.js';

export function batchCommandObserver(m: CeresMetrics, backend: string): BatchCommandObserver {
  return {
    observe(command, seconds, error) {
      m.batchSeconds.observe({ backend, command }, seconds);
      if (error !== undefined) m.batchErrors.inc({ backend, command });
    },
  };
}

/** The same backend, its operations timed. Updates and health pass through untouched. */
export function timedBackend(b: BatchBackend, observer: BatchCommandObserver): BatchBackend {
  return {
    name: b.name,
    onUpdate: (l) => b.onUpdate(l),
    submit: (spec) => timedCommand(observer, 'submit', () => b.submit(spec)),
    recover: (jobs) => timedCommand(observer, 'recover', () => b.recover(jobs)),
    cancel: (localId) => timedCommand(observer, 'cancel', () => b.cancel(localId)),
    ...(b.release
      ? {
          release: (j: Parameters<NonNullable<BatchBackend['release']>>[0]) =>
            timedCommand(observer, 'release', () => b.release!(j)),
        }
      : {}),
    close: () => b.close(),
    ...(b.usable ? { usable: () => b.usable!() } : {}),
  };
}
