/**
 * Which scope each operation needs (WLCG compute scopes, no path suffix) and the rule
 * choosing between scopes and groups: a token carrying at least one `compute.*` scope
 * is authorized by its scopes alone; a token without (only `openid`, storage scopes,
 * or none) is authorized by its groups through the authorization groups (src/authz),
 * and refused when none are configured. Only compute scopes count: nearly every token
 * carries some unrelated scope, which says nothing about compute.
 */
import type { TokenIdentity } from '../identity.js';
import { insufficientScope } from './bearer-errors.js';

/** What a request does, in the four classes of the compute scopes (src/api/rest/operation.ts decides). */
export type Operation = 'read' | 'create' | 'modify' | 'cancel';

export const SCOPE_OF: Readonly<Record<Operation, string>> = {
  read: 'compute.read',
  create: 'compute.create',
  modify: 'compute.modify',
  cancel: 'compute.cancel',
};

/** The token is authorized by its compute scopes (else by its groups). */
export function usesScopes(t: Pick<TokenIdentity, 'scopes'>): boolean {
  return t.scopes.some((s) => s.startsWith('compute.'));
}

/** Throws the 403 insufficient_scope refusal unless the token's scopes allow `op`. */
export function checkScope(t: Pick<TokenIdentity, 'scopes'>, op: Operation): void {
  const need = SCOPE_OF[op];
  if (!t.scopes.includes(need)) throw insufficientScope(need, `the token lacks the scope ${need} this operation needs`);
}

/** A token without compute scopes when no authorization groups are configured. */
export function noScopeNoGroups(op: Operation): never {
  const need = SCOPE_OF[op];
  throw insufficientScope(
    need,
    `the token carries no compute scope and no authorization group admits tokens: ${need} is needed`,
  );
}
