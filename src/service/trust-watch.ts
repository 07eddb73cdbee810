/**
 * Wiring of the live trust for the composition root (docs/security.md, "Trusted CAs"):
 *
 *  - every `tls.crlRecheckSeconds`, and at once on SIGHUP, the CA directory is looked at
 *    again (src/pki/live-trust-store.ts); a changed set of CAs goes to the listener for
 *    the handshakes that follow (the names in its CertificateRequest), and is logged;
 *  - on SIGHUP the host certificate and key are read again and, when they are a valid
 *    pair, given to the listener: new connections get the renewed certificate, open ones
 *    keep theirs. A pair that is not usable is refused with the reason and the running one
 *    stays;
 *  - a CA whose CRL is past its nextUpdate refuses all its users: one warning line per CA
 *    when that starts (not per refused connection) and one line when a fresh CRL ends it,
 *    the `ceres_crl_expired_cas` gauge, and an advisory readiness check naming the CAs.
 *
 * The timer is owned here and stopped by `stop`.
 */
import type { Server as TlsServer } from 'node:tls';
import type { Logger } from 'pino';
import type { LiveTrustStore } from '../pki/live-trust-store.js';
import { readHostCredentials, type HostCredentials } from '../pki/host-credentials.js';
import { replaceSecureContext } from '../http/secure-context.js';
import type { ReadinessCheck } from '../health/readiness.js';
import type { Metrics } from '../metrics/instruments.js';
import { registerTrustGauges } from '../metrics/trust.js';

export interface TrustWatchDeps {
  readonly live: LiveTrustStore;
  readonly server: TlsServer;
  /** The host certificate and key files, read again on SIGHUP. */
  readonly hostFiles: { readonly cert: string; readonly key: string };
  /** The pair the listener was started with. */
  readonly host: HostCredentials;
  readonly intervalMs: number;
  readonly log: Logger;
  readonly metrics: Metrics;
}

export class TrustWatch {
  readonly #d: TrustWatchDeps;
  #host: HostCredentials;
  #timer: NodeJS.Timeout | undefined;
  /** CAs (by fingerprint) whose expired CRL was reported, with their DN. */
  #expired = new Map<string, string>();

  constructor(d: TrustWatchDeps) {
    this.#d = d;
    this.#host = d.host;
    registerTrustGauges(d.metrics, {
      trustedCas: () => d.live.current.anchors.length,
      expiredCrls: (now) => d.live.current.expiredCrls(now).length,
    });
  }

  /** The host pair the listener uses now (the one it started with, or the last renewal it took). */
  get host(): HostCredentials {
    return this.#host;
  }

  /** Report expired CRLs found at start, then look again every interval. */
  start(): void {
    this.#look(Date.now(), false);
    this.#timer = setInterval(() => {
      if (this.#look(Date.now(), false)) this.#apply(this.#host);
    }, this.#d.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** SIGHUP: the host certificate and key, and the CA directory with its CRLs, at once. */
  reload(now: number = Date.now()): void {
    const host = this.#readHost(now);
    const cas = this.#look(now, true);
    if (host === undefined && !cas) return;
    // A new pair the listener refuses leaves it the old one, with the changed CAs if any.
    if (!this.#apply(host ?? this.#host, host !== undefined) && host !== undefined && cas) this.#apply(this.#host);
  }

  /** Advisory: an expired CRL refuses one CA's users, not the service (../health/readiness.ts). */
  readinessCheck(): ReadinessCheck {
    return {
      name: 'crls',
      advisory: true,
      check: () => {
        const expired = this.#d.live.current.expiredCrls(Date.now());
        if (expired.length === 0) return undefined;
        // CA names are public: every handshake lists them, and the info document too.
        return expired
          .map(
            (e) => `the CRL of ${e.ca.subjectOneline} expired at ${e.nextUpdate.toISOString()}: its users are refused`,
          )
          .join('; ');
      },
    };
  }

  /** Look at the CA directory; true when the set of trusted CAs changed. */
  #look(now: number, force: boolean): boolean {
    const r = this.#d.live.reload(now, force);
    if (r.outcome === 'kept') this.#d.metrics.trustReloads.inc({ part: 'cas', result: 'kept' });
    if (r.outcome === 'applied') {
      this.#d.log.info(
        {
          added: r.added.map((c) => c.subjectOneline),
          removed: r.removed.map((c) => c.subjectOneline),
          cas: this.#d.live.current.anchors.length,
        },
        'trusted CAs changed',
      );
      this.#d.metrics.trustReloads.inc({ part: 'cas', result: 'applied' });
    }
    this.#reportExpiredCrls(now);
    return r.outcome === 'applied';
  }

  /** The host pair read again: undefined when it is the running one, or not usable (said why). */
  #readHost(now: number): HostCredentials | undefined {
    let next: HostCredentials;
    try {
      next = readHostCredentials(this.#d.hostFiles.cert, this.#d.hostFiles.key, now);
    } catch (e) {
      this.#hostKept(e instanceof Error ? e.message : String(e));
      return undefined;
    }
    return next.certPem === this.#host.certPem && next.keyPem === this.#host.keyPem ? undefined : next;
  }

  /** Give the listener `host` and the current CAs for the handshakes that follow. */
  #apply(host: HostCredentials, renewed = false): boolean {
    try {
      replaceSecureContext(this.#d.server, {
        certPem: host.certPem,
        keyPem: host.keyPem,
        caPems: this.#d.live.current.pems,
      });
    } catch (e) {
      if (renewed) this.#hostKept(e instanceof Error ? e.message : String(e));
      else this.#d.log.error({ err: e }, 'the listener refused the new TLS context: it keeps the one it has');
      return false;
    }
    this.#host = host;
    if (renewed) {
      this.#d.metrics.trustReloads.inc({ part: 'host_certificate', result: 'applied' });
      this.#d.log.info(
        { subject: host.subject, notAfter: host.notAfter.toISOString(), fingerprint: host.fingerprint },
        'host certificate reloaded: new connections get it, open ones keep theirs',
      );
    }
    return true;
  }

  #hostKept(reason: string): void {
    this.#d.metrics.trustReloads.inc({ part: 'host_certificate', result: 'kept' });
    this.#d.log.error({ reason }, 'host certificate not reloaded: the running certificate and key are kept');
  }

  #reportExpiredCrls(now: number): void {
    const current = new Map(this.#d.live.current.expiredCrls(now).map((e) => [e.ca.fingerprint256, e]));
    for (const [fp, e] of current) {
      if (this.#expired.has(fp)) continue;
      this.#expired.set(fp, e.ca.subjectOneline);
      this.#d.log.warn(
        { ca: e.ca.subjectOneline, nextUpdate: e.nextUpdate.toISOString() },
        'CRL expired: every user of this CA is refused until a fresh CRL arrives (is fetch-crl running?)',
      );
    }
    const trusted = new Set(this.#d.live.current.anchors.map((c) => c.fingerprint256));
    for (const [fp, ca] of this.#expired) {
      if (current.has(fp)) continue;
      this.#expired.delete(fp);
      if (trusted.has(fp)) this.#d.log.info({ ca }, 'CRL current again: the users of this CA are accepted');
    }
  }
}
