/**
 * The trust store at scrape time: how many CA certificates are trusted, and how many of
 * those CAs have a CRL past its nextUpdate (every user of theirs is refused until a fresh
 * CRL arrives: alert on it). No DN in a label: which CAs it is, the log and /health/ready say.
 */
import type { Metrics } from './instruments.js';

export interface TrustFacts {
  trustedCas(): number;
  expiredCrls(now: number): number;
}

export function registerTrustGauges(m: Metrics, t: TrustFacts, now: () => number = Date.now): void {
  m.gaugeAtScrape('ceres_trusted_cas', 'CA certificates trusted (the CA directory as last read)', [], (set) =>
    set({}, t.trustedCas()),
  );
  m.gaugeAtScrape(
    'ceres_crl_expired_cas',
    'Trusted CAs whose CRL is past its nextUpdate: their users are refused until a fresh CRL arrives',
    [],
    (set) => set({}, t.expiredCrls(now())),
  );
}
