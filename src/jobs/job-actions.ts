/**
 * The bulk job actions (spec §4.3): one per-item result per requested id, in request
 * order (duplicates are answered twice). Request flags are persisted with a
 * compare-and-set before the 202 is given, then the engine is poked; the engine acts
 * on them (kill at once, clean once the job has ended, restart of a failed job).
 */
import type { TemplateDoc } from '../doc/template.js';

/** The formats an answer is written in (src/http/negotiate.ts Format). */
type DocFormat = 'json' | 'xml' | 'html';
import type { WrittenDoc } from '../doc/written-doc.js';
import type { ActivityWriter } from './activity.js';
import { ActivityCache, type CachedActivity } from './activity-cache.js';

/** Activity documents kept (activity-cache.ts): two answers of the largest size (1,000 ids). */
export const DEFAULT_ACTIVITY_CACHE_ENTRIES = 2000;
import type { JobStore } from '../store/job-store.js';
import type { JobChanges, JobRecord } from '../store/job-record.js';
import type { EnginePort } from './ports.js';

export interface BulkItem {
  readonly status: number;
  readonly reason: string;
  readonly id: string;
  readonly state?: string;
  readonly infoDocument?: WrittenDoc | null;
  readonly delegationIds?: readonly string[];
}

import { isFinal, machineStateOf } from '../engine/states.js';
import { killMovesOn, killRefusal, restartRefusal } from '../engine/state-machine.js';

const NOT_FOUND = (id: string): BulkItem => ({ status: 404, reason: 'Job not found', id });

/**
 * Whose jobs a reading action sees: an owner's (the owner key), or a VO's as its monitors
 * see them (src/authz/monitors.ts; the caller checked the role).
 */
export type Viewer = string | { readonly vo: string };

export class JobActions {
  constructor(
    readonly store: JobStore,
    readonly engine: EnginePort,
    /** A writer of activity documents for one request (activity.ts activityWriter). */
    readonly activity: () => ActivityWriter,
    /** Documents of unchanged jobs kept as written (activity-cache.ts); 0: none. */
    activityCacheEntries = DEFAULT_ACTIVITY_CACHE_ENTRIES,
  ) {
    this.#cache = new ActivityCache(activityCacheEntries);
  }

  readonly #cache: ActivityCache;

  /** The REST state of one of `owner`'s jobs, or undefined (unknown id, or another owner's job). */
  stateOf(owner: Viewer, id: string): string | undefined {
    return typeof owner === 'string' ? this.store.restStateOwned(id, owner) : this.#get(owner, id)?.restState;
  }

  #get(v: Viewer, id: string): JobRecord | undefined {
    return typeof v === 'string' ? this.store.getOwned(id, v) : this.store.getInVo(id, v.vo);
  }

  status(owner: Viewer, ids: readonly string[]): BulkItem[] {
    return ids.map((id) => {
      const state = this.stateOf(owner, id);
      return state !== undefined ? { status: 200, reason: 'OK', id, state } : NOT_FOUND(id);
    });
  }

  info(owner: Viewer, ids: readonly string[], format: DocFormat = 'json'): BulkItem[] {
    return ids.map(this.infoOf(owner, ids, format));
  }

  /**
   * The info item of one id at a time, for an answer streamed item by item; the items of
   * one answer share its writer (one clock reading, delegation lookups made once). `ids`
   * (the answer's ids) are checked against the document cache in one statement up front:
   * an unchanged job's document is taken as written in `format`; the others are read and
   * written, and kept. (HTML is rendered from the tree, never from the cache.)
   */
  infoOf(owner: Viewer, ids: readonly string[], format: DocFormat): (id: string) => BulkItem {
    const w = this.activity();
    const versions =
      typeof owner === 'string' ? this.store.versionsOwned(ids, owner) : this.store.versionsInVo(ids, owner.vo);
    const ok = (id: string, doc: WrittenDoc): BulkItem => ({ status: 200, reason: 'OK', id, infoDocument: doc });
    /** Read and write the document; keep it (filling `valid`, the entry of the same record, when there is one). */
    const fresh = (id: string, valid: CachedActivity | undefined): BulkItem => {
      const j = this.#get(owner, id);
      if (!j) return { ...NOT_FOUND(id), infoDocument: null };
      const doc = w.write(j);
      if (format === 'html') return ok(id, doc);
      let entry = valid;
      if (entry === undefined || entry.version !== j.version) {
        // A waiting job's reason changes with other jobs, not with its record: kept with it.
        const waiting = w.waiting(j);
        entry = {
          version: j.version,
          delegationId: j.delegationId,
          expiryMs: w.proxyExpiryMs(j.delegationId),
          ...(waiting !== undefined ? { waiting } : {}),
        };
        this.#cache.set(id, entry);
      }
      const e = entry;
      // The content is kept as it is written (in the answer's format), not before.
      const bodies = { json: () => (e.json ??= doc.bodies.json()), xml: () => (e.xml ??= doc.bodies.xml()) };
      return ok(
        id,
        w.wrap(bodies, () => doc.element()),
      );
    };
    return (id) => {
      const version = versions.get(id);
      // Not there when the answer began: no such job of this owner (a job made since is not asked for).
      if (version === undefined) return { ...NOT_FOUND(id), infoDocument: null };
      if (format === 'html') return fresh(id, undefined);
      const hit = this.#cache.get(id, version);
      const valid =
        hit !== undefined &&
        hit.expiryMs === w.proxyExpiryMs(hit.delegationId) &&
        (hit.waiting === undefined || hit.waiting.why === w.whyNow(hit.waiting.job))
          ? hit
          : undefined;
      const body = format === 'json' ? valid?.json : valid?.xml;
      if (valid === undefined || body === undefined) return fresh(id, valid);
      // Only the answer's format is asked of this document; anything else comes from the record.
      let other: TemplateDoc | undefined;
      const record = (): TemplateDoc => {
        if (other !== undefined) return other;
        const j = this.#get(owner, id);
        if (j === undefined) throw new Error(`job ${id} is gone`);
        return (other = w.write(j));
      };
      const bodies = {
        json: () => (format === 'json' ? body : record().bodies.json()),
        xml: () => (format === 'xml' ? body : record().bodies.xml()),
      };
      return ok(
        id,
        w.wrap(bodies, () => record().element()),
      );
    };
  }

  delegations(owner: string, ids: readonly string[]): BulkItem[] {
    return ids.map((id) => {
      const j = this.store.getOwned(id, owner);
      return j ? { status: 200, reason: 'OK', id, delegationIds: this.store.delegationsOf(id) } : NOT_FOUND(id);
    });
  }

  /**
   * Which actions a job's page offers now, with why not where one does not apply: the same
   * state-machine checks kill and restart make (so a page never offers what they refuse);
   * a request already made is not offered again. Clean applies to every job (once it has
   * ended it is carried out; before, queued).
   */
  applicable(j: JobRecord): { kill: string | undefined; restart: string | undefined } {
    const s = machineStateOf(j);
    return {
      kill: isFinal(s)
        ? (killRefusal(s) ?? 'Job has already ended')
        : j.killRequested || !killMovesOn(s)
          ? 'Job is already being killed or finishing'
          : undefined,
      restart: restartRefusal(s) ?? (j.restartRequested ? 'Restart already requested' : undefined),
    };
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
