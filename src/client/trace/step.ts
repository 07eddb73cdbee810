/**
 * One step of a trace: run with a deadline, timed, and judged. A failure names the step,
 * the reason and, where one is known, the remedy; a transport failure is worded here
 * once for every step ("connection refused at step submit").
 */
import { performance } from 'node:perf_hooks';
import { CLOSED_CODES, TRUST_CODES, UNREACHABLE_CODES, errorChain, notTls, tlsAlertOf } from '../transport-errors.js';

export const STEPS = [
  'credentials',
  'tls',
  'interface',
  'authentication',
  'authorization',
  'info',
  'queue',
  'dry-run',
  'delegation',
  'submit',
  'run',
  'output',
  'clean',
] as const;
export type StepName = (typeof STEPS)[number];

export interface StepResult {
  readonly step: StepName;
  readonly status: 'ok' | 'failed' | 'skipped';
  /** Milliseconds the step took. */
  readonly ms: number;
  /** What was found (ok, skipped) or what failed. */
  readonly detail: string;
  readonly remedy?: string;
  /** The failure is the transport's (nothing answered): the service may be gone. */
  readonly transport?: boolean;
}

/** A step's own failure: what went wrong and how to fix it. */
export class StepFailure extends Error {
  constructor(
    message: string,
    readonly remedy?: string,
    readonly transport = false,
    /** The step the failure belongs to, when not the one that met it (a 401 on `GET rest`: authentication). */
    readonly atStep?: StepName,
  ) {
    super(message);
    this.name = 'StepFailure';
  }
}

/** Thrown by a step that cannot apply here (the interface does not allow it). */
export class StepSkipped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StepSkipped';
  }
}

class StepTimeout extends Error {}

/**
 * Runs `body` with a deadline of `timeoutMs`: the signal it gets aborts its requests, and
 * the step ends at the deadline even if the body ignores the signal.
 */
export async function runStep(
  step: StepName,
  timeoutMs: number,
  where: string,
  body: (signal: AbortSignal) => Promise<string>,
): Promise<StepResult> {
  const t0 = performance.now();
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new StepTimeout(`no answer within ${timeoutMs / 1000} s`);
      ac.abort(e);
      reject(e);
    }, timeoutMs);
  });
  try {
    const detail = await Promise.race([body(ac.signal), deadline]);
    return { step, status: 'ok', ms: performance.now() - t0, detail };
  } catch (e) {
    const ms = performance.now() - t0;
    if (e instanceof StepSkipped) return { step, status: 'skipped', ms, detail: e.message };
    const f = explain(e, where, timeoutMs, step);
    return {
      step: f.atStep ?? step,
      status: 'failed',
      ms,
      detail: f.message,
      ...(f.remedy === undefined ? {} : { remedy: f.remedy }),
      ...(f.transport ? { transport: true } : {}),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** A failure as a StepFailure: the step's own, a timeout, or the transport's. */
export function explain(e: unknown, where: string, timeoutMs: number, step?: StepName): StepFailure {
  if (e instanceof StepFailure) return e;
  const timedOut = e instanceof StepTimeout || (e instanceof Error && e.cause instanceof StepTimeout);
  // Following the job, the service answered all along: the job is what did not end.
  if (timedOut && step === 'run')
    return new StepFailure(
      `the job did not reach a final state within ${timeoutMs / 1000} s`,
      "raise --timeout (a batch system may hold a job for long); the job's info document says why it waits",
    );
  if (timedOut)
    return new StepFailure(
      `${where} did not answer within ${timeoutMs / 1000} s`,
      'is the service overloaded or stopped? raise --timeout for a slow site',
      true,
    );
  const { codes, messages } = errorChain(e);
  const text = messages.join(' | ');
  const code = (set: ReadonlySet<string>): string | undefined => codes.find((c) => set.has(c));
  const unreachable = code(UNREACHABLE_CODES);
  if (unreachable !== undefined)
    return new StepFailure(
      unreachable === 'ECONNREFUSED'
        ? `connection refused by ${where} (ECONNREFUSED)`
        : `${where} is unreachable (${unreachable})`,
      'is the service running and listening there (ceres admin status; the port in the URL)?',
      true,
    );
  const trust = code(TRUST_CODES);
  if (trust !== undefined)
    return new StepFailure(
      `the server certificate of ${where} is not accepted (${trust})`,
      "pass the CA directory holding the server's CA with --ca-dir (or X509_CERT_DIR)",
      true,
    );
  const alert = tlsAlertOf(codes, text);
  if (alert !== undefined)
    return new StepFailure(
      `${where} refused the client credential in the TLS handshake (${alert})`,
      "check that the proxy is valid and that the service trusts the CA of the user's certificate",
      true,
    );
  if (notTls(codes, text))
    return new StepFailure(`${where} does not speak TLS (plain HTTP on that port?)`, undefined, true);
  const closed = code(CLOSED_CODES);
  if (closed !== undefined)
    return new StepFailure(
      `${where} closed the connection without an answer (${closed})`,
      'is the service running? its log says why it closed the connection',
      true,
    );
  return new StepFailure(
    `${codes[0] ?? ''} ${messages[0] ?? String(e)}`.replace(/\s+/g, ' ').trim() || 'unknown failure',
  );
}
