/**
 * What the jobs service needs from its neighbours, as narrow interfaces, so the
 * service is testable and the neighbours can evolve (composition in src/service/).
 */
import type { JobDescription } from '../vocabulary/job-description.js';

export type ItemFailure = {
  readonly ok: false;
  readonly status: number;
  readonly reason: string;
  /** The catalog code (src/errors/codes), when the failure has one. */
  readonly code?: string;
  /** The line of the submitted body it concerns, where the parser knew it (src/jobdesc/item-failure.ts). */
  readonly line?: number;
};
export type ParsedItem =
  { readonly ok: true; readonly text: string; readonly description: JobDescription } | ItemFailure;

export interface AcceptanceDefaults {
  readonly queue?: string | undefined;
  readonly delegationId?: string | undefined;
  /** Queues the caller may use (authorization); absent: all. */
  readonly authorisedQueues?: readonly string[] | undefined;
  /** The caller's authorization groups (named when a queue is not open to them). */
  readonly callerGroups?: readonly string[] | undefined;
}

export interface DescriptionPort {
  /**
   * Split and parse a submission body; throws a 4xx CeError for whole-request problems.
   * `multi`: the body used a multi-description form (then `instances` > 1 is refused).
   */
  split(body: Buffer): { readonly multi: boolean; readonly items: readonly ParsedItem[] };
  /** Acceptance checks (queue, RTEs, limits...) with the 1.1 defaults applied. */
  accept(
    desc: JobDescription,
    defaults: AcceptanceDefaults,
  ): { readonly ok: true; readonly description: JobDescription } | ItemFailure;
}

export interface DelegationPort {
  /** True when `id` is a delegation of `owner` usable by jobs. */
  ownedBy(id: string, owner: string): boolean;
}

export interface EnginePort {
  /** New jobs were stored; the engine should pick them up now (event-driven). */
  jobsSubmitted(ids: readonly string[]): void;
  /** A request flag (kill/clean/restart) or an upload changed a job. */
  jobPoked(id: string): void;
}
