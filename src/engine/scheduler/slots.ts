/**
 * Processing limits (A-REX `maxjobs`) and fairness. The scheduler keeps, in memory,
 * which non-final job is where (rebuilt from the store at start), so a limit check is
 * a counter read. Jobs held back by a limit wait in one FIFO per owner per step; a
 * freed slot goes to the owners in turn (round robin), so one user's 10,000 jobs do
 * not starve another user's one.
 *
 *   step              counted positions                       a job waits as
 *   ACCEPT            every job picked up, not final          ACCEPTED unprocessed (REST ACCEPTING)
 *   PREPARING         PREPARING                               PENDING:ACCEPTED (REST ACCEPTED)
 *   SUBMIT            SUBMIT, INLRMS                          PENDING:PREPARING (REST PREPARED)
 *   FINISHING         FINISHING                               PENDING:INLRMS (REST EXECUTED)
 *   per user          the owner's jobs past ACCEPTED, not final  PENDING:ACCEPTED
 *   running per user  the owner's SUBMIT, INLRMS              PENDING:PREPARING (REST PREPARED)
 *
 * The running limit per user is what keeps a shared host usable: with it, one user's
 * flood holds at most that many batch jobs, and a freed SUBMIT slot goes to the next
 * owner in turn who is under the limit, so another user's single job starts at once.
 */
import type { Position } from '../../vocabulary/job-states.js';
import type { SlotStep } from '../state-machine.js';

/** The steps a job may wait for; ACCEPT is being picked up at all (A-REX maxjobs, 1st field). */
export type WaitStep = SlotStep | 'ACCEPT';

export interface Limits {
  /** 0 or absent = unlimited, for each. Jobs picked up (past ACCEPTED, pending included) and not final. */
  readonly maxActive?: number;
  readonly maxPreparing: number;
  readonly maxRunning: number;
  readonly maxFinishing: number;
  readonly maxPerUser: number;
  /** Jobs of one owner in SUBMIT or INLRMS at once. */
  readonly maxRunningPerUser: number;
}

/** Positions counted against the per-user limit: picked up and not yet ended. */
const IN_PROCESS = (p: Position): boolean =>
  p !== 'ACCEPTED' && p !== 'PENDING:ACCEPTED' && p !== 'FINISHED' && p !== 'DELETED';

const STEP_OF: Partial<Record<Position, SlotStep>> = {
  PREPARING: 'PREPARING',
  SUBMIT: 'SUBMIT',
  INLRMS: 'SUBMIT',
  FINISHING: 'FINISHING',
};

export class Slots {
  readonly #limits: Limits;
  readonly #where = new Map<string, { pos: Position; owner: string }>();
  readonly #inStep: Record<SlotStep, number> = { PREPARING: 0, SUBMIT: 0, FINISHING: 0 };
  readonly #perOwner = new Map<string, number>();
  readonly #runningPerOwner = new Map<string, number>();
  readonly #waiting: Record<WaitStep, Map<string, string[]>> = {
    ACCEPT: new Map(),
    PREPARING: new Map(),
    SUBMIT: new Map(),
    FINISHING: new Map(),
  };
  readonly #turn: Record<WaitStep, string[]> = { ACCEPT: [], PREPARING: [], SUBMIT: [], FINISHING: [] };
  #pickedUp = 0;
  /** Jobs handed an ACCEPT slot by takeNext, not yet picked up: counted as picked up. */
  readonly #granted = new Set<string>();
  /**
   * Where each waiting job waits: a job waits for one step at a time, and this makes
   * wait() and unwait() of a job that is not waiting O(1). Every transition unwaits its
   * job; scanning all queues there made 30,000 waiting jobs cost seconds of CPU per
   * thousand transitions.
   */
  readonly #queued = new Map<string, { step: WaitStep; owner: string }>();

  constructor(limits: Limits) {
    this.#limits = limits;
  }

  /** Record where a job is now (undefined/final position: forget it). */
  set(id: string, owner: string, pos: Position | undefined): void {
    const old = this.#where.get(id);
    if (old) {
      const s = STEP_OF[old.pos];
      if (s) this.#inStep[s]--;
      if (s === 'SUBMIT') bump(this.#runningPerOwner, old.owner, -1);
      if (old.pos !== 'ACCEPTED') this.#pickedUp--;
      if (IN_PROCESS(old.pos)) this.#perOwner.set(old.owner, (this.#perOwner.get(old.owner) ?? 1) - 1);
      this.#where.delete(id);
    }
    if (pos === undefined || pos === 'FINISHED' || pos === 'DELETED') return;
    this.#where.set(id, { pos, owner });
    const s = STEP_OF[pos];
    if (s) this.#inStep[s]++;
    if (s === 'SUBMIT') bump(this.#runningPerOwner, owner, 1);
    if (pos !== 'ACCEPTED') {
      this.#pickedUp++;
      this.#granted.delete(id);
    }
    if (IN_PROCESS(pos)) this.#perOwner.set(owner, (this.#perOwner.get(owner) ?? 0) + 1);
  }

  activeOf(owner: string): number {
    return this.#perOwner.get(owner) ?? 0;
  }

  /** Whether a job may enter `step` now (it is not counted there yet). */
  free(step: WaitStep): boolean {
    if (step === 'ACCEPT') {
      const max = this.#limits.maxActive ?? 0;
      return max === 0 || this.#pickedUp + this.#granted.size < max;
    }
    const max =
      step === 'PREPARING'
        ? this.#limits.maxPreparing
        : step === 'SUBMIT'
          ? this.#limits.maxRunning
          : this.#limits.maxFinishing;
    return max === 0 || this.#inStep[step] < max;
  }

  /** Whether a job of `owner` may enter `step` now: the step's limit and the owner's limit for it. */
  mayEnter(step: WaitStep, owner: string): boolean {
    return this.free(step) && !this.#ownerFullFor(step, owner);
  }

  #ownerFullFor(step: WaitStep, owner: string): boolean {
    if (step === 'PREPARING') return this.ownerFull(owner);
    if (step === 'SUBMIT') {
      const max = this.#limits.maxRunningPerUser;
      return max !== 0 && (this.#runningPerOwner.get(owner) ?? 0) >= max;
    }
    return false;
  }

  /** Whether the owner is at the per-user limit (a job of theirs about to be picked up must wait). */
  ownerFull(owner: string): boolean {
    const max = this.#limits.maxPerUser;
    return max !== 0 && this.activeOf(owner) >= max;
  }

  wait(step: WaitStep, id: string, owner: string): void {
    const at = this.#queued.get(id);
    if (at?.step === step) return;
    if (at) this.unwait(id);
    let q = this.#waiting[step].get(owner);
    if (!q) {
      this.#waiting[step].set(owner, (q = []));
      this.#turn[step].push(owner);
    }
    q.push(id);
    this.#queued.set(id, { step, owner });
  }

  unwait(id: string): void {
    const at = this.#queued.get(id);
    if (!at) return;
    this.#queued.delete(id);
    const q = this.#waiting[at.step].get(at.owner);
    if (!q) return;
    const i = q.indexOf(id);
    if (i >= 0) q.splice(i, 1);
    if (q.length === 0) this.#dropOwner(at.step, at.owner);
  }

  /**
   * Next waiting job for `step`, owners in turn; undefined when none may go now. An
   * ACCEPT job is granted its slot until it is picked up (takeGrant, set).
   */
  takeNext(step: WaitStep): string | undefined {
    if (!this.free(step)) return undefined;
    const turn = this.#turn[step];
    for (let n = 0; n < turn.length; n++) {
      const owner = turn.shift() as string;
      const q = this.#waiting[step].get(owner);
      if (!q || q.length === 0) {
        this.#waiting[step].delete(owner);
        continue;
      }
      if (this.#ownerFullFor(step, owner)) {
        turn.push(owner);
        continue;
      }
      const id = q.shift() as string;
      this.#queued.delete(id);
      if (q.length === 0) this.#waiting[step].delete(owner);
      else turn.push(owner);
      if (step === 'ACCEPT') this.#granted.add(id);
      return id;
    }
    return undefined;
  }

  /** Whether `id` was granted an ACCEPT slot; the grant ends here (picked up or not). */
  takeGrant(id: string): boolean {
    return this.#granted.delete(id);
  }

  waitingCount(step: WaitStep): number {
    let n = 0;
    for (const q of this.#waiting[step].values()) n += q.length;
    return n;
  }

  runningOf(owner: string): number {
    return this.#runningPerOwner.get(owner) ?? 0;
  }

  #dropOwner(step: WaitStep, owner: string): void {
    this.#waiting[step].delete(owner);
    const t = this.#turn[step];
    const i = t.indexOf(owner);
    if (i >= 0) t.splice(i, 1);
  }
}

function bump(m: Map<string, number>, k: string, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n > 0) m.set(k, n);
  else m.delete(k);
}
