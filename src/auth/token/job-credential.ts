/**
 * The token serves the job (as in ARC 7): a job submitted with a bearer token and no
 * delegation of its own gets the caller's token as its credential, held as an ordinary
 * JWT delegation of the token's owner. Data staging presents it like any delegated
 * token, the job's delegation list names it, and the client can renew it
 * (`action=renew` with `X-Token-Delegation`) to give running jobs a fresh token.
 *
 * One such delegation per owner, shared by the owner's token-submitted jobs: a later
 * submission with a token that lives longer replaces the stored one, so earlier jobs
 * still waiting to stage out profit from it too, and a pilot factory submitting
 * thousands of jobs with one token makes one delegation, not thousands. The owner's
 * delegation is remembered in memory; after a restart the first submission makes a new
 * one (the old one expires with its token and is swept).
 */
import type { TokenIdentity } from '../identity.js';

/** What is needed of the delegation service. */
export interface JwtDelegations {
  createJwt(owner: string, token: string): Promise<{ id: string }>;
  renewJwt(owner: string, id: string, token: string): Promise<void>;
  ownedBy(id: string, owner: string): boolean;
}

const MAX_OWNERS = 10_000;

export class CallerTokenDelegations {
  readonly #d: JwtDelegations;
  readonly #byOwner = new Map<string, { id: string; notAfter: number }>();
  /** One creation or renewal at a time per owner. */
  readonly #pending = new Map<string, Promise<string>>();

  constructor(d: JwtDelegations) {
    this.#d = d;
  }

  /** The id of the owner's token delegation, holding this token or a longer-lived one. */
  async delegationFor(t: TokenIdentity): Promise<string> {
    for (;;) {
      const p = this.#pending.get(t.owner);
      if (p === undefined) break;
      await p.catch(() => undefined);
    }
    const run = this.#update(t).finally(() => this.#pending.delete(t.owner));
    this.#pending.set(t.owner, run);
    return run;
  }

  async #update(t: TokenIdentity): Promise<string> {
    const known = this.#byOwner.get(t.owner);
    const notAfter = t.notAfter.getTime();
    if (known !== undefined && this.#d.ownedBy(known.id, t.owner)) {
      if (notAfter > known.notAfter) {
        await this.#d.renewJwt(t.owner, known.id, t.token);
        known.notAfter = notAfter;
      }
      return known.id;
    }
    const { id } = await this.#d.createJwt(t.owner, t.token);
    if (this.#byOwner.size >= MAX_OWNERS) this.#byOwner.clear();
    this.#byOwner.set(t.owner, { id, notAfter });
    return id;
  }
}
