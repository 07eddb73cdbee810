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
 */
export interface ReadinessCheck {
  readonly name: string;
  check(): string | undefined | Promise<string | undefined>;
}

export interface Readiness {
  readonly ready: boolean;
  readonly checks: readonly { readonly name: string; readonly ok: boolean; readonly reason?: string }[];
}

/** A check that does not answer in this time fails (a hung batch system must not hang the probe). */
const CHECK_TIMEOUT_MS = 2000;

export async function evaluate(checks: readonly ReadinessCheck[]): Promise<Readiness> {
  const results = await Promise.all(
    checks.map(async (c) => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>(
        (r) => (timer = setTimeout(() => r(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS)),
      );
      try {
        const reason = await Promise.race([Promise.resolve().then(() => c.check()), timeout]);
        return reason === undefined ? { name: c.name, ok: true } : { name: c.name, ok: false, reason };
      } catch (e) {
        return { name: c.name, ok: false, reason: e instanceof Error ? e.message : String(e) };
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ready: results.every((r) => r.ok), checks: results };
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
