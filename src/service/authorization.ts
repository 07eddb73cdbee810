/**
 * Wiring of authentication and authorization for the composition root: the caller of
 * a request from its bearer token (src/auth/token) or else from the connection's
 * verified certificate (with its VOMS FQANs), and, when the configuration has an
 * `authorization` section, the decision of src/authz (groups, allowed, local account,
 * queues). Without the section there is no group decision: every authenticated
 * certificate caller is allowed, unmapped, as before, and a token caller needs the
 * compute scope of the operation.
 *
 * A request with both a client certificate and a bearer token is the token's: the token
 * owns the jobs and is authorized (the certificate then only secures the connection).
 * A client that sends a token means to act as that token; a token that fails is refused
 * (401), never passed over for the certificate.
 *
 * A root service gives every caller that no mapping maps the default account
 * (`accounts.default`, `defaultAccount` here): a grid user's job never runs as root.
 */
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { Db } from '../store/database.js';
import type { Authenticator, Authorizer as HttpAuthorizer, Caller } from '../http/caller.js';
import { peerIdentity } from '../http/tls-options.js';
import { tlsAuthenticator } from '../http/tls-authenticator.js';
import { Authorizer } from '../authz/authorizer.js';
import { cleanUpAccount } from '../accounts/account-cleanup.js';
import { subjectOfIdentity, type AuthzSubject } from '../authz/subject.js';
import type { Identity } from '../auth/identity.js';
import type { TokenVerifier } from './tokens.js';
import { bearerOf } from '../auth/token/bearer-header.js';
import { BEARER_CHALLENGE, invalidTokenHeaders } from '../auth/token/bearer-errors.js';
import { checkScope, noScopeNoGroups, usesScopes } from '../auth/token/scopes.js';
import { browserVoms } from './browser-voms.js';

export interface AuthWiring {
  readonly authenticate: Authenticator;
  readonly authorize: HttpAuthorizer;
  /** The web pages' authorizer: `authorize` plus the browser rule for VO members (browser-voms.ts). */
  readonly authorizeBrowser: HttpAuthorizer;
}

export function createAuth(
  config: Config,
  db: Db,
  log: Logger,
  tokens?: TokenVerifier,
  defaultAccount?: string,
): AuthWiring {
  const certificateCaller: Authenticator = (req) => {
    const r = tlsAuthenticator(req);
    // With a trusted issuer, a request without credentials is told that a token would do.
    if (!r.ok && r.code === 'CE_ERR_AUTH_NO_CREDENTIALS' && tokens !== undefined) {
      return {
        ...r,
        reason: 'no client certificate or bearer token was presented',
        headers: { 'www-authenticate': BEARER_CHALLENGE },
      };
    }
    return r;
  };
  const authenticate: Authenticator = (req) => {
    const b = bearerOf(req.headers.authorization);
    if (b === undefined) return certificateCaller(req);
    const refuse = (reason: string) => ({
      ok: false as const,
      code: 'CE_ERR_AUTH_TOKEN_INVALID' as const,
      reason: `Bearer token refused: ${reason}`,
      headers: invalidTokenHeaders(reason),
    });
    if ('malformed' in b) return refuse('the Authorization header holds no single token');
    if (tokens === undefined) return refuse('this service trusts no token issuer');
    return tokens.verify(b.token).then((r) => {
      if (!r.ok) {
        log.info({ reason: r.reason, remote: req.socket.remoteAddress }, 'bearer token refused');
        return refuse(r.reason);
      }
      const t = r.identity;
      return { ok: true, caller: { dn: t.owner, owner: t.owner, kind: 'token', notAfter: t.notAfter, token: t } };
    });
  };
  const browser = browserVoms({
    db,
    windowSeconds: () => config.web.vomsWindowSeconds,
    mayAct: () => config.web.vomsMayAct,
  });
  const authorizer =
    config.authorization === undefined
      ? undefined
      : new Authorizer(config.authorization, config.mapping, config.cluster.queues, db, {
          sharedAccounts: config.accounts.shared,
          onFileLoad: (e) => {
            if (e.error !== undefined)
              log.warn(
                { file: e.path, error: e.error },
                'grid-mapfile unreadable: it grants nothing until it can be read',
              );
            else log.info({ file: e.path, entries: e.entries, badLines: e.problems.length }, 'grid-mapfile loaded');
            for (const p of e.problems.slice(0, 20))
              log.warn({ file: e.path, line: p.line, reason: p.reason }, 'grid-mapfile line skipped');
          },
          onLeasesDropped: (accounts) => log.info({ accounts }, 'pool leases of accounts no longer in a pool dropped'),
          // A root service runs jobs as the pool accounts: a released one is cleaned up
          // (processes, shared temporary folders) before it passes on. A service that is
          // not root runs no job as another account (a mapping needs root).
          ...(process.geteuid?.() === 0
            ? {
                cleanAccount: (account: string) => cleanUpAccount(account),
                onAccountCleaned: (account: string, error?: unknown) => {
                  if (error === undefined) log.info({ account }, 'pool account cleaned up: free for another identity');
                  else
                    log.warn(
                      { account, err: error },
                      'pool account cleanup failed: it stays out of the pool, tried again at the next sweep',
                    );
                },
              }
            : {}),
        });
  // The identity object is kept per connection (and per verified chain, or per cached
  // token): its subject is built once, not per request.
  const subjects = new WeakMap<Identity, AuthzSubject>();
  const subjectOf = (id: Identity): AuthzSubject => {
    let s = subjects.get(id);
    if (s === undefined) subjects.set(id, (s = subjectOfIdentity(id)));
    return s;
  };
  const granted = (caller: Caller, s: AuthzSubject): Caller => {
    if (authorizer === undefined) return caller;
    const g = authorizer.authorize(s, caller.owner);
    return {
      ...caller,
      ...(g.localAccount !== undefined ? { localAccount: g.localAccount } : {}),
      ...(g.queues !== undefined ? { queues: g.queues, groups: g.groups } : {}),
      ...(g.monitors !== undefined ? { monitors: g.monitors } : {}),
    };
  };
  const decide: HttpAuthorizer = (req, caller, operation) => {
    const t = caller.token;
    if (t !== undefined) {
      // WLCG profile: compute scopes decide what the token may do; without any, its groups
      // (through the authorization groups) decide whether it may do anything.
      if (usesScopes(t)) checkScope(t, operation);
      else if (authorizer === undefined) noScopeNoGroups(operation);
      return granted(caller, subjectOf(t));
    }
    if (authorizer === undefined) return caller;
    const r = peerIdentity(req.socket as TLSSocket);
    // authenticate() succeeded for this request; the connection's identity is the same.
    if (!r.ok) return caller;
    const c = granted(caller, subjectOf(r.identity));
    // Granted with verified VOMS attributes: the browser rule may admit this certificate's browser.
    browser.seen(caller.owner, r.identity);
    return c;
  };
  const withDefault = (c: Caller): Caller =>
    defaultAccount === undefined || c.localAccount !== undefined ? c : { ...c, localAccount: defaultAccount };
  const authorize: HttpAuthorizer = (req, caller, operation) => withDefault(decide(req, caller, operation));
  const authorizeBrowser =
    authorizer === undefined ? authorize : browser.wrap(authorize, (c, s) => withDefault(granted(c, s)), subjectOf);
  return { authenticate, authorize, authorizeBrowser };
}
