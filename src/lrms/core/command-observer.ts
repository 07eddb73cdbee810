/**
 * How a batch backend reports the commands it runs (sbatch, squeue, scancel, ...) to
 * the service's metrics without knowing about them: the backend calls `observe` once
 * per command with its duration and, when it failed, a short error class. The fork
 * backend runs no commands; its operations are timed around the BatchBackend calls.
 */
export interface BatchCommandObserver {
  observe(command: string, seconds: number, error?: string): void;
}

/** Runs `fn`, reporting its duration and failure to `observer` under `command`. */
export async function timedCommand<T>(
  observer: BatchCommandObserver | undefined,
  command: string,
  fn: () => Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  try {
    const r = await fn();
    observer?.observe(command, (performance.now() - t0) / 1000);
    return r;
  } catch (e) {
    observer?.observe(command, (performance.now() - t0) / 1000, e instanceof Error ? e.name : 'error');
    throw e;
  }
}
