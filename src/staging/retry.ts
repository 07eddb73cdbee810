/**
 * Retries with exponential backoff and jitter for transient failures only. The delay
 * before retry n is min(max, initial * multiplier^(n-1)), of which a random half is
 * taken off ("equal jitter") so that jobs failing together do not retry together; a
 * server's Retry-After raises it (up to the maximum).
 */
import { isTransient } from './staging-error.js';

export interface RetryPolicy {
  readonly maxAttempts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly multiplier: number;
  readonly random?: () => number;
}

export function retryDelay(policy: RetryPolicy, failedAttempt: number, retryAfterMs?: number): number {
  const base = Math.min(policy.maxDelayMs, policy.initialDelayMs * policy.multiplier ** Math.max(0, failedAttempt - 1));
  const jittered = base / 2 + (policy.random ?? Math.random)() * (base / 2);
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}

/** Resolves after `ms`, rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted === true) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export interface AttemptTally {
  attempts: number;
}

/**
 * Run `fn` until it succeeds, fails permanently, or attempts run out; `tally.attempts`
 * counts the attempts made (also when the last one throws).
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  tally: AttemptTally,
  fn: (attempt: number) => Promise<T>,
  onRetry?: (attempt: number, error: unknown, delayMs: number) => void,
): Promise<T> {
  for (;;) {
    tally.attempts++;
    try {
      return await fn(tally.attempts);
    } catch (e) {
      if (signal.aborted || !isTransient(e) || tally.attempts >= policy.maxAttempts) throw e;
      const delay = retryDelay(policy, tally.attempts, (e as { retryAfterMs?: number }).retryAfterMs);
      onRetry?.(tally.attempts, e, delay);
      await sleep(delay, signal);
    }
  }
}
