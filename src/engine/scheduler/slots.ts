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
 *
 * Memory (docs/performance.md, "Memory"): a service may hold 100,000 waiting jobs, so
 * the per-job state is one Map entry whose value is a small integer (owner number,
 * wait step, position), and a wait queue entry is the id alone. Leaving a queue
 * (unwait) only forgets where the job's entry is: the entry goes stale and is skipped
 * when reached, or dropped when the owner's queue empties or is compacted. An entry is
 * handed out only if it is the one recorded for the job (its step and its place in
 * the queue), so a stale entry can never grant a slot twice, to a job that no longer
 * waits, or ahead of its turn to a job that left and queued again.
 */
import { POSITIONS, type Position } from '../../vocabulary/job-states.js';
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

/** Position codes: 0 = not counted (not picked up, or final). */
const POS_CODE = new Map<Position, number>(POSITIONS.map((p, i) => [p, i + 1]));
const WAIT_STEPS: readonly WaitStep[] = ['ACCEPT', 'PREPARING', 'SUBMIT', 'FINISHING'];
/** Wait codes: 0 = not waiting. */
const WAIT_CODE: Record<WaitStep, number> = { ACCEPT: 1, PREPARING: 2, SUBMIT: 3, FINISHING: 4 };
const POS_SPAN = 16; // > POSITIONS.length
const WAIT_SPAN = 8; // > WAIT_STEPS.length
const OWNER_UNIT = POS_SPAN * WAIT_SPAN;

/**
 * One owner's FIFO for one step: ids from `head` on; `live` of them still wait (the rest
 * are stale). An entry's place is `base + index`, stable when the array is cut.
 */
interface Queue {
  ids: string[];
  head: number;
  base: number;
  live: number;
}

export class Slots {
  readonly #limits: Limits;
  /** Per job: owner number × OWNER_UNIT + wait code × POS_SPAN + position code. */
  readonly #jobs = new Map<string, number>();
  /** Per waiting job: the place of its live entry in its owner's queue for its step. */
  readonly #place = new Map<string, number>();
  readonly #ownerNo = new Map<string, number>();
  readonly #ownerName: string[] = [];
  readonly #inStep: Record<SlotStep, number> = { PREPARING: 0, SUBMIT: 0, FINISHING: 0 };
  readonly #perOwner = new Map<string, number>();
  readonly #runningPerOwner = new Map<string, number>();
  readonly #waiting: Record<WaitStep, Map<string, Queue>> = {
    ACCEPT: new Map(),
    PREPARING: new Map(),
    SUBMIT: new Map(),
    FINISHING: new Map(),
  };
  readonly #waitingCount: Record<WaitStep, number> = { ACCEPT: 0, PREPARING: 0, SUBMIT: 0, FINISHING: 0 };
  readonly #turn: Record<WaitStep, string[]> = { ACCEPT: [], PREPARING: [], SUBMIT: [], FINISHING: [] };
  #pickedUp = 0;
  /** Jobs handed an ACCEPT slot by takeNext, not yet picked up: counted as picked up. */
  readonly #granted = new Set<string>();

  constructor(limits: Limits) {
    this.#limits = limits;
  }

  #owner(owner: string): number {
    let n = this.#ownerNo.get(owner);
    if (n === undefined) {
      n = this.#ownerName.length;
      this.#ownerName.push(owner);
      this.#ownerNo.set(owner, n);
    }
    return n;
  }

  /** Stores a job's packed value; a job neither counted nor waiting is forgotten. */
  #put(id: string, ownerNo: number, wait: number, pos: number): void {
    if (wait === 0 && pos === 0) this.#jobs.delete(id);
    else this.#jobs.set(id, ownerNo * OWNER_UNIT + wait * POS_SPAN + pos);
  }

  /** Record where a job is now (undefined/final position: forget it). */
  set(id: string, owner: string, pos: Position | undefined): void {
    const v = this.#jobs.get(id);
    let wait = 0;
    if (v !== undefined) {
      wait = Math.floor(v / POS_SPAN) % WAIT_SPAN;
      const oldPos = v % POS_SPAN;
      if (oldPos !== 0) {
        const p = POSITIONS[oldPos - 1]!;
        const o = this.#ownerName[Math.floor(v / OWNER_UNIT)]!;
        const s = STEP_OF[p];
        if (s) this.#inStep[s]--;
        if (s === 'SUBMIT') bump(this.#runningPerOwner, o, -1);
        if (p !== 'ACCEPTED') this.#pickedUp--;
        if (IN_PROCESS(p)) this.#perOwner.set(o, (this.#perOwner.get(o) ?? 1) - 1);
      }
    }
    if (pos === undefined || pos === 'FINISHED' || pos === 'DELETED') {
      if (v !== undefined) this.#put(id, Math.floor(v / OWNER_UNIT), wait, 0);
      return;
    }
    this.#put(id, this.#owner(owner), wait, POS_CODE.get(pos)!);
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
    const v = this.#jobs.get(id);
    const code = WAIT_CODE[step];
    if (v !== undefined && Math.floor(v / POS_SPAN) % WAIT_SPAN === code) return;
    if (v !== undefined) this.unwait(id);
    const ownerNo = this.#owner(owner);
    let q = this.#waiting[step].get(owner);
    if (!q) {
      this.#waiting[step].set(owner, (q = { ids: [], head: 0, base: 0, live: 0 }));
      this.#turn[step].push(owner);
    }
    this.#place.set(id, q.base + q.ids.length);
    q.ids.push(id);
    q.live++;
    this.#waitingCount[step]++;
    const pos = v === undefined ? 0 : v % POS_SPAN;
    this.#put(id, ownerNo, code, pos);
    // Stale entries (jobs that left the queue out of turn) are dropped once they dominate.
    if (q.ids.length - q.head > 2 * q.live + 1024) this.#compact(step, q);
  }

  unwait(id: string): void {
    const v = this.#jobs.get(id);
    if (v === undefined) return;
    const wait = Math.floor(v / POS_SPAN) % WAIT_SPAN;
    if (wait === 0) return;
    const step = WAIT_STEPS[wait - 1]!;
    const ownerNo = Math.floor(v / OWNER_UNIT);
    this.#put(id, ownerNo, 0, v % POS_SPAN);
    this.#place.delete(id);
    this.#waitingCount[step]--;
    const owner = this.#ownerName[ownerNo]!;
    const q = this.#waiting[step].get(owner);
    if (!q) return;
    q.live--;
    if (q.live <= 0) this.#dropOwner(step, owner);
  }

  /** Whether the entry at `place` of a queue for `step` is the job's live one. */
  #live(id: string, step: WaitStep, place: number): boolean {
    const v = this.#jobs.get(id);
    return v !== undefined && Math.floor(v / POS_SPAN) % WAIT_SPAN === WAIT_CODE[step] && this.#place.get(id) === place;
  }

  /** The next live entry of `q`, taken off it; undefined if only stale ones remain. */
  #shiftLive(step: WaitStep, q: Queue): string | undefined {
    while (q.head < q.ids.length) {
      const place = q.base + q.head;
      const id = q.ids[q.head++]!;
      if (!this.#live(id, step, place)) continue;
      if (q.head > 1024 && q.head * 2 > q.ids.length) {
        q.ids = q.ids.slice(q.head);
        q.base += q.head;
        q.head = 0;
      }
      return id;
    }
    return undefined;
  }

  /** Keep only live entries, in order; their places are renumbered past every old one. */
  #compact(step: WaitStep, q: Queue): void {
    const ids: string[] = [];
    const base = q.base + q.ids.length;
    for (let i = q.head; i < q.ids.length; i++) {
      const id = q.ids[i]!;
      if (!this.#live(id, step, q.base + i)) continue;
      this.#place.set(id, base + ids.length);
      ids.push(id);
    }
    q.ids = ids;
    q.head = 0;
    q.base = base;
    q.live = ids.length;
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
      if (!q || q.live <= 0) {
        this.#waiting[step].delete(owner);
        continue;
      }
      if (this.#ownerFullFor(step, owner)) {
        turn.push(owner);
        continue;
      }
      const id = this.#shiftLive(step, q);
      if (id === undefined) {
        // Cannot happen while live > 0; recover rather than lose the owner's turn.
        this.#waiting[step].delete(owner);
        continue;
      }
      const v = this.#jobs.get(id)!;
      this.#put(id, Math.floor(v / OWNER_UNIT), 0, v % POS_SPAN);
      this.#place.delete(id);
      this.#waitingCount[step]--;
      q.live--;
      if (q.live <= 0) this.#waiting[step].delete(owner);
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
    return this.#waitingCount[step];
  }

  runningOf(owner: string): number {
    return this.#runningPerOwner.get(owner) ?? 0;
  }

  /** Jobs the book-keeping holds (counted or waiting): tests check that ended jobs leave nothing behind. */
  get tracked(): number {
    return this.#jobs.size;
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
