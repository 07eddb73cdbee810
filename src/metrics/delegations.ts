/**
 * Delegations stored, by type and whether their credential is still valid, computed
 * from the database when scraped (an indexed count; the table is small).
 */
import type { Db } from '../store/database.js';
import type { Metrics } from './instruments.js';

export function registerDelegationGauges(m: Metrics, db: Db, now: () => number = Date.now): void {
  const q = db.prepare(
    "SELECT type, CASE WHEN cred_file IS NULL THEN 'pending' WHEN expires_at IS NOT NULL AND expires_at <= ? THEN 'expired' ELSE 'valid' END AS state, COUNT(*) AS n FROM delegations GROUP BY 1, 2",
  );
  m.gaugeAtScrape(
    'ceres_delegations',
    'Delegations stored, by type (x509, jwt) and state (valid, expired, pending: no credential yet)',
    ['type', 'state'],
    (set) => {
      for (const r of q.all(now()) as { type: string; state: string; n: number }[])
        set({ type: r.type, state: r.state }, r.n);
    },
  );
}
