/**
 * Wiring of bearer-token authentication for the composition root: the trusted issuers
 * of the configuration (plus the development issuer when the development PKI is in
 * use), their keys fetched over https verified with the trusted grid CAs and the
 * system's roots (token issuers usually have public-CA certificates), and the accepted
 * audiences (by default the service URL, its origin and the WLCG "any" audience).
 * Undefined when no issuer is trusted: a bearer token is then refused as untrusted.
 *
 * The verifier (jose, the issuers' key sets) is imported and built when the first bearer
 * token arrives, not at start: most requests carry a certificate, and a site may never
 * see a token (docs/performance.md, "Memory").
 */
import { rootCertificates } from 'node:tls';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { TokenResult } from '../auth/token/verify.js';
import { httpsGetJson } from '../http/https-get-json.js';
import { ANY_AUDIENCE, type DevIssuer } from '../auth/token/dev-issuer.js';

/** What the authentication wiring needs of the token verifier. */
export interface TokenVerifier {
  verify(token: string): Promise<TokenResult>;
}

export interface TokenWiringDeps {
  readonly config: Config;
  readonly log: Logger;
  /** Trusted grid CAs (PEM) as they are now (the CA directory is followed). */
  readonly caPems: () => readonly string[];
  /** The service URL as published (after listen: the port is known then). */
  readonly serviceUrl: () => string;
  readonly devIssuer?: DevIssuer | undefined;
}

export function createTokenAuth(d: TokenWiringDeps): TokenVerifier | undefined {
  const t = d.config.tokens;
  const sources = [
    ...t.issuers,
    ...(d.devIssuer === undefined ? [] : [{ issuer: d.devIssuer.issuer, jwksFile: d.devIssuer.jwksFile }]),
  ];
  // A token rule naming an issuer that is not trusted can never match: say so at start.
  const trusted = new Set(sources.map((s) => s.issuer));
  for (const g of d.config.authorization?.groups ?? []) {
    for (const r of g.match)
      if (r.token !== undefined && !trusted.has(r.token.issuer))
        d.log.warn(
          { group: g.name, issuer: r.token.issuer },
          'a token match rule names an issuer not in tokens.issuers: it matches nobody',
        );
  }
  if (sources.length === 0) return undefined;
  let built: Promise<TokenVerifier> | undefined;
  const build = async (): Promise<TokenVerifier> => {
    const [{ IssuerKeys }, { TokenAuthenticator }] = await Promise.all([
      import('../auth/token/issuer-keys.js'),
      import('../auth/token/token-authenticator.js'),
    ]);
    const log = d.log.child({ part: 'tokens' });
    const issuers = new Map<string, InstanceType<typeof IssuerKeys>>();
    for (const s of sources) {
      issuers.set(
        s.issuer,
        new IssuerKeys(s, {
          refreshMs: t.keysRefreshSeconds * 1000,
          maxAgeMs: t.keysMaxAgeSeconds * 1000,
          getJson: (url) => httpsGetJson(url, { ca: [...rootCertificates, ...d.caPems()] }),
          onLoad: (e) =>
            e.error === undefined
              ? log.info(e, 'token issuer keys loaded')
              : log.warn(e, 'token issuer keys not loaded'),
        }),
      );
    }
    const audiences = (): string[] => {
      if (t.audiences !== undefined) return t.audiences;
      const url = d.serviceUrl();
      return [...new Set([url, new URL(url).origin, ANY_AUDIENCE])];
    };
    return new TokenAuthenticator({ issuers, audiences, clockSkewSeconds: t.clockSkewSeconds });
  };
  return {
    verify: async (token) => {
      built ??= build();
      return (await built).verify(token);
    },
  };
}
