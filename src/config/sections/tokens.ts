import { Type } from '@sinclair/typebox';
import { ISSUER_URL } from '../patterns.js';
import { PATH } from '../paths.js';

const issuer = Type.Object(
  {
    issuer: Type.String({
      ...ISSUER_URL,
      description: 'The issuer (`iss` claim) exactly as its tokens carry it; an https URL without fragment',
    }),
    jwksFile: Type.Optional(
      Type.String({
        ...PATH,
        minLength: 1,
        description:
          "The issuer's keys as a JWK set file (re-read when a token names an unknown key). Unset: discovery, `<issuer>/.well-known/openid-configuration` then its `jwks_uri`, over https",
      }),
    ),
  },
  { additionalProperties: false },
);

/** Bearer tokens (WLCG JWT profile): trusted issuers and the checks (docs/security.md). */
export const tokensSection = {
  tokens: Type.Object(
    {
      issuers: Type.Array(issuer, {
        default: [],
        description: 'Trusted token issuers; a token from any other issuer is refused (401)',
      }),
      audiences: Type.Optional(
        Type.Array(Type.String({ minLength: 1 }), {
          minItems: 1,
          description:
            'Accepted audiences (`aud`, compared exactly). Unset: the service URL, its origin `https://host:port` (also of publicUrl) and `https://wlcg.cern.ch/jwt/v1/any`',
        }),
      ),
      clockSkewSeconds: Type.Integer({
        default: 60,
        minimum: 0,
        maximum: 600,
        description: 'Allowance for clock differences when checking `exp`, `nbf` and `iat`',
      }),
      keysRefreshSeconds: Type.Integer({
        default: 60,
        minimum: 1,
        description:
          "An issuer's keys are fetched (or its jwksFile read) at most once per this interval, whatever the traffic: a token naming an unknown key triggers a fetch only when the last one is older",
      }),
      keysMaxAgeSeconds: Type.Integer({
        default: 3600,
        minimum: 60,
        description: 'Fetched keys are fetched again after this long (when a token of the issuer next arrives)',
      }),
      devIssuer: Type.Boolean({
        default: true,
        description:
          'With the development PKI (no tls.hostCert configured): trust the development token issuer whose key is kept in the PKI folder (`ceres token issue`)',
      }),
    },
    {
      default: {},
      additionalProperties: false,
      description: 'Bearer tokens (WLCG JWT profile) accepted instead of, or with, a client certificate',
    },
  ),
};
