/**
 * What an HTTP answer of the service means for a trace: the expected status, or a
 * failure in the caller's terms (401: the credential; 403: the site's authorization).
 * Ceres says why in a JSON body (`reason`, `code`); A-REX in the reason phrase.
 */
import type { Answer } from '../rest-client.js';
import { parseJson, textOf } from '../rest-answers.js';
import { StepFailure } from './step.js';

export const AUTHZ_REMEDY =
  "the site's authorization does not admit this identity: ask the site's administrators to admit your VO or group";

/** The service's own words for an answer: the JSON reason and code, else the reason phrase. */
export function answerReason(a: Answer): string {
  const doc = parseJson(a.body.toString('utf8'));
  const reason = textOf(doc?.reason) ?? (a.reason === '' ? undefined : a.reason);
  const code = textOf(doc?.code);
  return `HTTP ${a.status}${reason === undefined ? '' : ` ${reason}`}${code === undefined ? '' : ` (${code})`}`;
}

/** The answer when its status is one of `ok`; a StepFailure saying what the service answered otherwise. */
export function expectStatus(a: Answer, ok: readonly number[], what: string, identity: string): Answer {
  if (ok.includes(a.status)) return a;
  const said = answerReason(a);
  if (a.status === 401)
    throw new StepFailure(
      `${what}: the service did not accept the credential of ${identity}: ${said}`,
      'check the credential: a valid proxy from a CA the site trusts, or a token from an issuer it trusts (with the audience it expects)',
    );
  if (a.status === 403) throw new StepFailure(`${what}: the service refuses ${identity}: ${said}`, AUTHZ_REMEDY);
  throw new StepFailure(`${what}: ${said}`);
}
