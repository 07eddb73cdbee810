/**
 * The bulk job actions (spec §4.3): one per-item result per requested id, in request
 * order (duplicates are answered twice). Request flags are persisted with a
 * compare-and-set before the 202 is given, then the engine is poked; the engine acts
 * on them (kill at once, clean once the job has ended, restart of a failed job).
 */
import type { XmlElement } from '../doc/element.js';
import type { JobStore } from '../store/job-store.js';
import type { JobChanges, JobRecord } from '../store/job-record.js';
import type { EnginePort } from './ports.js';

export interface BulkItem {
  readonly status: number;
  readonly reason: string;
  readonly id: string;
  readonly state?: string;
  readonly infoDocument?: XmlElement | null;
  readonly delegationIds?: readonly string[];
}

import { isFinal, machineStateOf } from '../engine/states.js';
import { killRefusal, restartRefusal } from '../engine/state-machine.js';

const NOT_FOUND = (id: string): BulkItem => ({ status: 404, reason: 'Job not found', id });

export class JobActions {
  constructor(
    readonly store: JobStore,
    readonly engine: EnginePort,
    readonly activity: (job: JobRecord) => XmlElement,
  ) {}

  /** The REST state of one of `owner`'s jobs, or undefined (unknown id, or another owner's job). */
  stateOf(owner: string, id: string): string | undefined {
    return this.store.restStateOwned(id, owner);
  }

  status(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) => {
      const state = this.store.restStateOwned(id, owner);
      return state !== undefined ? { status: 200, reason: 'OK', id, state } : NOT_FOUND(id);
    });
  }

  info(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) => {
      const j = this.store.getOwned(id, owner);
      return j
        ? { status: 200, reason: 'OK', id, infoDocument: this.activity(j) }
        : { ...NOT_FOUND(id), infoDocument: null };
    });
  }

  delegations(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) => {
      const j = this.store.getOwned(id, owner);
      return j ? { status: 200, reason: 'OK', id, delegationIds: this.store.delegationsOf(id) } : NOT_FOUND(id);
    });
  }

  kill(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) =>
      this.#flag(owner, id, (j) => {
        // Refusal texts come from the state machine, so they are worded in one place. A kill
        // of a job being submitted is accepted here and acted on once the batch system answers.
        if (isFinal(machineStateOf(j)))
          return { refuse: { status: 409, reason: killRefusal(machineStateOf(j)) ?? 'Job has already ended' } };
        if (j.killRequested) return { ok: { status: 202, reason: 'Queued for killing' } };
        return { changes: { killRequested: true }, ok: { status: 202, reason: 'Queued for killing' } };
      }),
    );
  }

  clean(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) =>
      this.#flag(owner, id, (j) => {
        const reason = isFinal(machineStateOf(j))
          ? 'Queued for cleaning'
          : 'Queued for cleaning once the job has ended';
        if (j.cleanRequested) return { ok: { status: 202, reason } };
        return { changes: { cleanRequested: true }, ok: { status: 202, reason } };
      }),
    );
  }

  restart(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) =>
      this.#flag(owner, id, (j) => {
        const refusal = restartRefusal(machineStateOf(j));
        if (refusal !== undefined) return { refuse: { status: 409, reason: refusal } };
        if (j.restartRequested) return { ok: { status: 202, reason: 'Queued for restarting' } };
        return { changes: { restartRequested: true }, ok: { status: 202, reason: 'Queued for restarting' } };
      }),
    );
  }

  #flag(
    owner: string,
    id: string,
    decide: (
      j: JobRecord,
    ) =>
      { refuse: { status: number; reason: string } } | { changes?: JobChanges; ok: { status: number; reason: string } },
  ): BulkItem {
    for (let attempt = 0; attempt < 5; attempt++) {
      const j = this.store.getOwned(id, owner);
      if (!j) return NOT_FOUND(id);
      const d = decide(j);
      if ('refuse' in d) return { ...d.refuse, id };
      if (d.changes === undefined) return { ...d.ok, id };
      if (this.store.update(j, d.changes)) {
        this.engine.jobPoked(id);
        return { ...d.ok, id };
      }
    }
    return { status: 503, reason: 'Job is changing state; try again', id };
  }
}
