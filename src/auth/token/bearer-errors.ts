/**
 * Refusals of bearer-token callers as RFC 6750 §3 words them: 401 with
 * `WWW-Authenticate: Bearer error="invalid_token", error_description="..."` for a token
 * that is malformed, expired, untrusted or does not verify; 403 with
 * `error="insufficient_scope"` and the `scope` needed for a token that verifies but does
 * not allow the operation. A request without any credentials gets the bare challenge.
 * Descriptions name the failed check only: the token is never echoed.
 */
import { ceError, type CeError } from '../../errors/ce-error.js';

export const REALM = 'ceres';

/** RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (no `"` or `\`). */
function quoted(s: string): string {
  return s.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, '?');
}

/** The challenge sent with a 401 for a request that presented no credentials. */
export const BEARER_CHALLENGE = `Bearer realm="${REALM}"`;

export function invalidTokenHeaders(reason: string): Record<string, string> {
  return {
    'www-authenticate': `Bearer realm="${REALM}", error="invalid_token", error_description="${quoted(reason)}"`,
  };
}

export function insufficientScope(scope: string, reason: string): CeError {
  return ceError('CE_ERR_AUTH_TOKEN_SCOPE', reason, {
    headers: {
      'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", error_description="${quoted(reason)}", scope="${quoted(scope)}"`,
    },
  });
}
