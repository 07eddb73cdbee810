/**
 * Wiring of authentication and authorization for the composition root: the caller of
 * a request from the connection's verified certificate (with its VOMS FQANs), and,
 * when the configuration has an `authorization` section, the decision of src/authz
 * (groups, allowed, local account, queues). Without the section there is no authorizer
 * and every authenticated caller is allowed, unmapped, as before.
 */
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Db } from '../store/database.js';
import type { Authenticator, Authorizer as HttpAuthorizer } from '../http/caller.js';
import { peerIdentity } from '../http/tls-options.js';
import { tlsAuthenticator } from '../http/tls-authenticator.js';
import { Authorizer } from '../authz/authorizer.js';
import { subjectOfIdentity, type AuthzSubject } from '../authz/subject.js';
import type { Identity } from '../auth/identity.js';

export interface AuthWiring {
  readonly authenticate: Authenticator;
  readonly authorize?: HttpAuthorizer;
}

export function createAuth(config: Config, db: Db, log: Logger): AuthWiring {
  const authenticate: Authenticator = tlsAuthenticator;
  if (config.authorization === undefined) return { authenticate };
  const authorizer = new Authorizer(config.authorization, config.mapping, config.cluster.queues, db, {
    onFileLoad: (e) => {
      if (e.error !== undefined) log.warn({ file: e.path, error: e.error }, 'grid-mapfile unreadable: it grants nothing until it can be read');
      else log.info({ file: e.path, entries: e.entries, badLines: e.problems.length }, 'grid-mapfile loaded');
      for (const p of e.problems.slice(0, 20)) log.warn({ file: e.path, line: p.line, reason: p.reason }, 'grid-mapfile line skipped');
    },
    onLeasesDropped: (accounts) => log.info({ accounts }, 'pool leases of accounts no longer in a pool dropped'),
  });
  // The identity object is kept per connection (and per verified chain): its subject is
  // built once, not per request.
  const subjects = new WeakMap<Identity, AuthzSubject>();
  const authorize: HttpAuthorizer = (req, caller) => {
    const r = peerIdentity(req.socket as TLSSocket);
    // authenticate() succeeded for this request; the connection's identity is the same.
    if (!r.ok) return caller;
    let s = subjects.get(r.identity);
    if (s === undefined) subjects.set(r.identity, (s = subjectOfIdentity(r.identity)));
    const g = authorizer.authorize(s, caller.dn);
    return { ...caller, ...(g.localAccount !== undefined ? { localAccount: g.localAccount } : {}), ...(g.queues !== undefined ? { queues: g.queues } : {}) };
  };
  return { authenticate, authorize };
}
