/**
 * Delegation ids: 128 random bits as 32 lower-case hex digits. Unguessable (an id
 * alone grants nothing: every access is owner-checked, but an id must not reveal or
 * predict another user's), safe in URLs, job descriptions and file names. Clients
 * take the id from the last path segment of the Location header.
 */
import { randomBytes } from 'node:crypto';

export function newDelegationId(): string {
  return randomBytes(16).toString('hex');
}

/** Ids we could have issued; anything else is answered as an unknown delegation. */
export function isWellFormedDelegationId(s: string): boolean {
  return /^[0-9a-f]{32}$/.test(s);
}
