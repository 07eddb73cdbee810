/**
 * Readiness and liveness for load balancers and supervisors.
 *
 *  - live: the process answers (its event loop turns). Restart it when this fails.
 *  - ready: new work can be taken: the store answers a query, the batch backend is
 *    usable (started, and its own check passes), and no file system is below its
 *    low-water mark. Take the instance out of the pool while this fails; running jobs
 *    continue either way.
 *
 * Each check returns undefined when it passes, else a short reason.
 *
 * An advisory check reports a fault that refuses some users but not new work as such
 * (an expired CRL refuses one CA's users): it is listed as a warning and leaves the
 * verdict alone, since taking the instance out of a pool would refuse everybody. Its
 * reason is shown on the public port too, so it may only say what is public anyway.
 */
export interface ReadinessCheck {
  readonly name: string;
  readonly advisory?: true;
  check(): string | undefined | Promise<string | undefined>;
}

export interface Readiness {
  readonly ready: boolean;
  readonly checks: readonly {
    readonly name: string;
    readonly ok: boolean;
    readonly reason?: string;
    readonly advisory?: true;
  }[];
}

/** A check that does not answer in this time fails (a hung batch system must not hang the probe). */
const CHECK_TIMEOUT_MS = 2000;

export async function evaluate(checks: readonly ReadinessCheck[]): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async (c) => {
      const a = c.advisory === true ? { advisory: true as const } : {};
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>(
        (r) => (timer = setTimeout(() => r(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS)),
      );
      try {
        const reason = await Promise.race([Promise.resolve().then(() => c.check()), timeout]);
        return reason === undefined ? { name: c.name, ok: true, ...a } : { name: c.name, ok: false, reason, ...a };
      } catch (e) {
        return { name: c.name, ok: false, reason: e instanceof Error ? e.message : String(e), ...a };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: results.every((r) => r.ok || r.advisory === true), checks: results };
}

/** The store answers a query (fails once the database is closed or unreadable). */
export function storeCheck(db: { prepare(sql: string): { get(): unknown } }): ReadinessCheck {
  return {
    name: 'store',
    check: () => {
      db.prepare('SELECT 1 FROM schema_migrations LIMIT 1').get();
      return undefined;
    },
  };
}
