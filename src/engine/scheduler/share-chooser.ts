/**
 * Fair share and route limits for the hand-over to the batch system (docs/routes.md,
 * "Limits and fair share"): which waiting job takes a free SUBMIT slot, in place of the
 * round robin per user of slots.ts for that step. The service always uses it, whatever the
 * configuration was at start: the settings are read per use, so a reload (SIGHUP) that
 * adds a route limit or fair share, or changes `fairShare.by`, holds at once, with the
 * jobs already in the batch system counted. With `fairShare.by: user` and no route limit
 * it is the users in turn (one lane per route, VO and owner).
 *
 * Each job has a class: its route (the name stored at submission) and its VO (the VO of
 * its first FQAN). Jobs wait in lanes, one FIFO per class and owner. A free slot goes to
 * the share key (the VO or the route, `fairShare.by`) whose jobs in the batch system are
 * fewest for its share (`running / share`; on a tie the larger share, then the key served
 * longest ago: by name, a VO that sorts first took every slot freed while the keys were even,
 * so with one slot the other VO never ran), and within
 * it to the lanes in turn; a lane whose route is at `maxRunning`, whose VO within the
 * route is at `maxRunningPerVo`, or whose owner is at the per-user running limit is passed
 * over, never dropped. With a bounded number of slots and every key waiting, the jobs
 * in the batch system are in the proportion of the shares: one VO's burst of 50,000 jobs
 * holds its share, and another VO's 10 jobs take theirs at the next free slots.
 *
 * Memory: a job waiting or in the batch system is one map entry to its class (one object
 * per route and VO) and, waiting, one to its lane and its id in the lane's FIFO.
 *
 * Cost: a take sorts the share keys that have waiting jobs (a handful: VOs or routes)
 * and walks that key's lanes at most once. A job leaving a lane out of turn (a kill)
 * stays in the lane's FIFO and is skipped when reached (it no longer waits there).
 */
import { IdQueue } from './id-queue.js';
import type { JobRecord } from '../../store/job-record.js';

/** What a job is counted under. */
export interface JobClass {
  /** The route's name; '' without routes. */
  readonly route: string;
  /** The VO of the job's first FQAN; '' without one. */
  readonly vo: string;
}

/** A stored job's class: its route, and the VO of its first FQAN (`/atlas/Role=x` is `atlas`). */
export function jobClassOf(j: Pick<JobRecord, 'route' | 'fqans'> | undefined): JobClass {
  return { route: j?.route?.name ?? '', vo: voOf(j?.fqans[0]) };
}

/** The VO a job counts under: that of its first FQAN (`/atlas/Role=x` is `atlas`); '' without one. */
export function voOf(firstFqan: string | undefined): string {
  return (firstFqan ?? '').split('/')[1] ?? '';
}

/** Read per use: the settings are reloadable, `by` too. 0: no limit. */
export interface ShareSettings {
  /** What the shares are per: the VO or the route of a job; `user`: no shares, the lanes (users) in turn. */
  readonly by: 'user' | 'vo' | 'route';
  shareOf(key: string): number;
  maxRunning(route: string): number;
  maxRunningPerVo(route: string): number;
}

/** What holds a waiting job back, or undefined: nothing of the chooser's. */
export interface ShareHold {
  readonly limit: 'maxRunning' | 'maxRunningPerVo';
  readonly route: string;
  readonly vo: string;
  readonly value: number;
}

/** What of a job record its class is read from (given where the caller holds the record: no read). */
export type ClassSource = Pick<JobRecord, 'route' | 'fqans'>;

interface Lane {
  /** The share key it is in turn under, for the `by` the turns were built for. */
  key: string;
  readonly owner: string;
  readonly cls: JobClass;
  readonly ids: IdQueue;
  live: number;
}

const SEP = '\u0000';
/** Counter names; a share key is the counter of its kind (`by`): a VO's, a route's, or all jobs'. */
const routeKey = (route: string): string => `r${SEP}${route}`;
const routeVoKey = (c: JobClass): string => `rv${SEP}${c.route}${SEP}${c.vo}`;
const voKey = (vo: string): string => `v${SEP}${vo}`;
const ALL = `u${SEP}`;

export class ShareChooser {
  readonly #settings: ShareSettings;
  readonly #classOf: (id: string) => JobClass;
  /** One class object per route and VO: a job's entry points to it. */
  readonly #classes = new Map<string, JobClass>();
  /** Class of each job counted or waiting here. */
  readonly #jobs = new Map<string, JobClass>();
  /** The lane each waiting job waits in. */
  readonly #waiting = new Map<string, Lane>();
  readonly #lanes = new Map<string, Lane>();
  /** Per share key: its lanes with waiting jobs, in turn, grouped for `#turnsBy`. */
  readonly #turns = new Map<string, Lane[]>();
  #turnsBy: ShareSettings['by'];
  /**
   * Jobs in the batch system (SUBMIT, INLRMS) per route, per route and VO, per VO and in
   * all, each counted whatever the settings are now: a reload (SIGHUP) that adds a route
   * limit or fair share, or changes `by`, finds the jobs already there counted.
   */
  readonly #running = new Map<string, number>();
  /** The jobs counted in #running. */
  readonly #inBatch = new Set<string>();
  /** Per share key with waiting jobs: when it was last given a slot (a take's sequence number; absent: never). */
  readonly #servedAt = new Map<string, number>();
  #takes = 0;

  constructor(settings: ShareSettings, classOf: (id: string) => JobClass) {
    this.#settings = settings;
    this.#classOf = classOf;
    this.#turnsBy = settings.by;
  }

  #cls(id: string, job?: ClassSource): JobClass {
    let c = this.#jobs.get(id);
    if (c === undefined) {
      const fresh = job === undefined ? this.#classOf(id) : jobClassOf(job);
      const k = `${fresh.route}${SEP}${fresh.vo}`;
      c = this.#classes.get(k);
      if (c === undefined) this.#classes.set(k, (c = fresh));
      this.#jobs.set(id, c);
    }
    return c;
  }

  #shareKey(c: JobClass, by: ShareSettings['by']): string {
    return by === 'vo' ? voKey(c.vo) : by === 'route' ? routeKey(c.route) : ALL;
  }

  /** A job entered (+1) or left (-1) the batch system's step; `job`: its record, when at hand. */
  counted(id: string, by: 1 | -1, job?: ClassSource): void {
    if (by > 0) {
      if (this.#inBatch.has(id)) return;
      this.#inBatch.add(id);
    } else if (!this.#inBatch.delete(id)) return;
    const c = this.#cls(id, job);
    for (const k of [routeKey(c.route), routeVoKey(c), voKey(c.vo), ALL]) {
      const n = (this.#running.get(k) ?? 0) + by;
      if (n > 0) this.#running.set(k, n);
      else this.#running.delete(k);
    }
    if (by < 0) this.forget(id);
  }

  /** The job ended or left: its class goes unless it still waits or is counted. */
  forget(id: string): void {
    if (!this.#waiting.has(id) && !this.#inBatch.has(id)) this.#jobs.delete(id);
  }

  /** Jobs of `route` in the batch system (and of `vo` within it, when given). */
  runningOf(route: string, vo?: string): number {
    return this.#running.get(vo === undefined ? routeKey(route) : routeVoKey({ route, vo })) ?? 0;
  }

  /** What route limit holds a job of class `c` back now, if any. */
  #hold(c: JobClass): ShareHold | undefined {
    const max = this.#settings.maxRunning(c.route);
    if (max > 0 && this.runningOf(c.route) >= max) return { limit: 'maxRunning', route: c.route, vo: c.vo, value: max };
    const perVo = this.#settings.maxRunningPerVo(c.route);
    if (perVo > 0 && this.runningOf(c.route, c.vo) >= perVo)
      return { limit: 'maxRunningPerVo', route: c.route, vo: c.vo, value: perVo };
    return undefined;
  }

  /** The route limit that holds job `id` back now (why it waits), if any. */
  holdOf(id: string): ShareHold | undefined {
    return this.#hold(this.#cls(id));
  }

  /**
   * Whether job `id` may go to the batch system at once: no route limit holds it and no
   * job waits (a waiting one may have the better claim: the job waits and the next take
   * decides).
   */
  mayEnter(id: string, job?: ClassSource): boolean {
    return this.#waiting.size === 0 && this.#hold(this.#cls(id, job)) === undefined;
  }

  get waiting(): number {
    return this.#waiting.size;
  }

  wait(id: string, owner: string, job?: ClassSource): void {
    const c = this.#cls(id, job);
    const laneKey = `${c.route}${SEP}${c.vo}${SEP}${owner}`;
    const was = this.#waiting.get(id);
    if (was !== undefined && this.#lanes.get(laneKey) === was) return;
    if (was !== undefined) {
      this.unwait(id);
      this.#jobs.set(id, c);
    }
    let lane = this.#lanes.get(laneKey);
    if (lane === undefined) {
      lane = { key: this.#shareKey(c, this.#turnsBy), owner, cls: c, ids: new IdQueue(), live: 0 };
      this.#lanes.set(laneKey, lane);
      let turn = this.#turns.get(lane.key);
      if (turn === undefined) this.#turns.set(lane.key, (turn = []));
      turn.push(lane);
    }
    lane.ids.push(id);
    lane.live++;
    this.#waiting.set(id, lane);
  }

  /** The job no longer waits (it left out of turn); its entry is skipped when reached. */
  unwait(id: string): void {
    const lane = this.#waiting.get(id);
    if (lane === undefined) return;
    this.#waiting.delete(id);
    this.forget(id);
    if (--lane.live <= 0) this.#dropLane(lane);
  }

  #dropLane(lane: Lane): void {
    this.#lanes.delete(`${lane.cls.route}${SEP}${lane.cls.vo}${SEP}${lane.owner}`);
    const turn = this.#turns.get(lane.key);
    if (turn === undefined) return;
    const i = turn.indexOf(lane);
    if (i >= 0) turn.splice(i, 1);
    if (turn.length === 0) {
      this.#turns.delete(lane.key);
      this.#servedAt.delete(lane.key);
    }
  }

  /** `by` changed (a reload): the lanes are grouped under the new share keys, each keeping its place in turn. */
  #regroup(by: ShareSettings['by']): void {
    const lanes = [...this.#turns.values()].flat();
    this.#turns.clear();
    this.#servedAt.clear();
    this.#turnsBy = by;
    for (const lane of lanes) {
      lane.key = this.#shareKey(lane.cls, by);
      let turn = this.#turns.get(lane.key);
      if (turn === undefined) this.#turns.set(lane.key, (turn = []));
      turn.push(lane);
    }
  }

  /** Share keys with waiting jobs, the one furthest below its share first. */
  #keysInOrder(): string[] {
    const s = this.#settings;
    if (s.by !== this.#turnsBy) this.#regroup(s.by);
    const claim = (key: string): { ratio: number; share: number } => {
      // The share of a VO or route by its name (the key after its kind); all jobs: 1.
      const share = key === ALL ? 1 : Math.max(1, s.shareOf(key.slice(key.indexOf(SEP) + 1)));
      return { ratio: (this.#running.get(key) ?? 0) / share, share };
    };
    return [...this.#turns.keys()]
      .map((key) => ({ key, ...claim(key) }))
      .sort(
        (a, b) =>
          a.ratio - b.ratio ||
          b.share - a.share ||
          (this.#servedAt.get(a.key) ?? -1) - (this.#servedAt.get(b.key) ?? -1) ||
          (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
      )
      .map((k) => k.key);
  }

  /**
   * The next job to hand to the batch system, taken off its lane; undefined when every
   * waiting job is held (a route limit, or its owner's running limit: `ownerFull`).
   */
  take(ownerFull: (owner: string) => boolean): string | undefined {
    for (const key of this.#keysInOrder()) {
      const turn = this.#turns.get(key)!;
      for (let n = turn.length; n > 0; n--) {
        const lane = turn.shift()!;
        turn.push(lane);
        if (this.#hold(lane.cls) !== undefined || ownerFull(lane.owner)) continue;
        for (let id = lane.ids.shift(); id !== undefined; id = lane.ids.shift()) {
          if (this.#waiting.get(id) !== lane) continue; // left out of turn
          this.#waiting.delete(id);
          this.#servedAt.set(key, ++this.#takes);
          if (--lane.live <= 0) this.#dropLane(lane);
          return id;
        }
        this.#dropLane(lane); // only stale entries were left
      }
    }
    return undefined;
  }

  /** Jobs whose class is kept (tests: ended jobs leave nothing behind). */
  get tracked(): number {
    return this.#jobs.size;
  }
}
