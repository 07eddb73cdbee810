/**
 * The browser rule for VO members (config `web.vomsWindowSeconds`, docs/security.md,
 * "Browsers of VO members"). A browser presents the plain certificate, never a VOMS proxy,
 * so at a site whose authorization asks for a VO every member's browser would be refused.
 * The rule: a certificate whose VOMS proxy authenticated here, and was authorized, within
 * the window is authorized for the web pages as that proxy's FQANs would be; read-only
 * unless `web.vomsMayAct`. When the window passes without a new proxy, the access ends.
 *
 * What it keeps: "owner last seen with FQAN F at T" (src/store/voms-seen.ts), written only
 * from an attribute certificate that verified (src/auth/voms: signature, LSC, holder,
 * validity) on a request that the authorization granted, at most once an hour per identity
 * and FQAN set (a request must not cost a write). What it never does: admit a browser
 * whose certificate is not itself verified (the TLS layer verified it, CRLs applied, before
 * this runs), skip the authorization (the groups, bans and mapping are decided again, on
 * the recorded FQANs, at every request), or act for the REST interface (grid clients
 * present their proxies).
 */
import type { TLSSocket } from 'node:tls';
import { ceError, isCeError } from '../errors/ce-error.js';
import type { Authorizer as HttpAuthorizer, Caller } from '../http/caller.js';
import { peerIdentity } from '../http/tls-options.js';
import type { Identity } from '../auth/identity.js';
import { withFqans, type AuthzSubject, type X509Subject } from '../authz/subject.js';
import { VomsSeen } from '../store/voms-seen.js';
import type { Db } from '../store/database.js';

/** A proxy seen again within this is not written again (the window is days). */
const RECORD_EVERY_MS = 3600_000;
/** Throttle entries kept before the old ones are dropped. */
const MAX_REMEMBERED = 10_000;

export interface BrowserVomsOptions {
  readonly db: Db;
  /** Read per request (the section may be reloaded). */
  readonly windowSeconds: () => number;
  readonly mayAct: () => boolean;
  readonly now?: () => number;
}

export interface BrowserVoms {
  /** A request with verified FQANs was granted: remember them (throttled). */
  seen(owner: string, identity: Identity): void;
  /** The web's authorizer: `authorize`, and where it refuses a certificate without VOMS attributes, the rule. */
  wrap(
    authorize: HttpAuthorizer,
    grant: (caller: Caller, s: AuthzSubject) => Caller,
    subjectOf: (id: Identity) => AuthzSubject,
  ): HttpAuthorizer;
}

export function browserVoms(o: BrowserVomsOptions): BrowserVoms {
  const store = new VomsSeen(o.db);
  const now = o.now ?? Date.now;
  const written = new Map<string, number>();
  const windowMs = () => o.windowSeconds() * 1000;
  // The window may have passed while the service was down.
  if (windowMs() > 0) store.prune(now() - windowMs());

  const seen = (owner: string, id: Identity): void => {
    const fqans = (id.kind === 'x509' ? id.voms?.fqans : undefined) ?? [];
    const w = windowMs();
    if (fqans.length === 0 || w === 0) return;
    const key = JSON.stringify([owner, fqans]);
    const t = now();
    if (t - (written.get(key) ?? -Infinity) < RECORD_EVERY_MS) return;
    if (written.size >= MAX_REMEMBERED) written.clear();
    written.set(key, t);
    store.record(owner, fqans, t, t - w);
  };

  const days = (s: number) => (s % 86400 === 0 ? `${s / 86400} days` : `${s} seconds`);
  /** Why a browser is refused, and what to ask for (the page shows it). */
  const explain = (e: { code: Parameters<typeof ceError>[0]; message: string }, c: Caller, w: number) =>
    ceError(
      e.code,
      `${e.message}. A browser presents your certificate (${c.dn}), never a VOMS proxy. If you are a member of a VO ` +
        (w > 0
          ? `this site serves, use a VOMS proxy of it once with a grid client here (voms-proxy-init --voms <vo>, then e.g. arcinfo or arcstat with this service): your browser is then admitted for ${days(w)}, read-only unless the site allows more. `
          : 'this site serves, use a grid client with a VOMS proxy: this site does not admit browsers through VO membership. ') +
        'Otherwise ask the site administrators to authorize your certificate.',
    );

  const wrap: BrowserVoms['wrap'] = (authorize, grant, subjectOf) => (req, caller, operation) => {
    try {
      return authorize(req, caller, operation);
    } catch (e) {
      if (!isCeError(e) || e.statusCode !== 403 || caller.kind !== 'x509') throw e;
      const r = peerIdentity(req.socket as TLSSocket);
      // A proxy with attributes of its own was decided on them.
      if (!r.ok || r.identity.voms !== undefined) throw e;
      const w = o.windowSeconds();
      const recent = w === 0 ? [] : store.recent(caller.owner, now() - w * 1000);
      if (recent.length === 0) throw explain(e, caller, w);
      const fqans = recent.map((s) => s.fqan);
      const base = subjectOf(r.identity) as X509Subject;
      let c: Caller;
      try {
        // The groups, bans and mapping decided again, on the FQANs last seen.
        c = grant({ ...caller, fqans }, withFqans(base, fqans));
      } catch (e2) {
        if (isCeError(e2) && e2.statusCode === 403) throw explain(e2, caller, w);
        throw e2;
      }
      if (operation !== 'read' && !o.mayAct()) throw ceError('CE_ERR_WEB_VOMS_READ_ONLY');
      return c;
    }
  };

  return { seen, wrap };
}
