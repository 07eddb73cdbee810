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
 * Submissions under way (position SUBMIT alone: handed to the backend, its answer not
 * yet in) are bounded too when the backend says how many it runs at once
 * (`maxSubmitting`): a job handed over waits in the backend's queue for the submission
 * command, first come first served, so without the bound a burst handed over at once
 * was submitted ahead of any job that came later, whatever its share. With it the
 * others wait here, where the fair share (or the owners' turn) decides which is next.
 *
 * The running limit per user is what keeps a shared host usable: with it, one user's
 * flood holds at most that many batch jobs, and a freed SUBMIT slot goes to the next
 * owner in turn who is under the limit, so another user's single job starts at once.
 *
 * Memory (docs/performance.md, "Memory"): a service may hold 100,000 waiting jobs, so
 * the per-job state is one Map entry whose value is a small integer (owner number,
 * wait step, position), and a wait queue entry is the id alone. Leaving a queue out
 * of turn (unwait) leaves the entry where it is and counts it as stale for that job
 * and step; it is skipped when reached, or dropped when the owner's queue empties or
 * is compacted, and its count goes with it. Only jobs that left out of turn have a
 * count, so a job waiting in the ordinary way costs no second entry.
 *
 * Invariant: a job's stale entries in a queue all come before its live one (an entry
 * is only ever appended, and a job has at most one live entry), so the first
 * `stale[step][id]` entries of the job that are reached are the stale ones. An entry
 * is handed out only if the job has no stale entry left there and waits for that step,
 * so a stale entry can never grant a slot twice, to a job that no longer waits, or
 * ahead of its turn to a job that left and queued again.
 */
import { POSITIONS, type Position } from '../../vocabulary/job-states.js';
import type { SlotStep } from '../state-machine.js';
import type { ClassSource, ShareChooser } from './share-chooser.js';

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

/** One owner's FIFO for one step: ids from `head` on; `live` of them still wait (the rest are stale). */
interface Queue {
  ids: string[];
  head: number;
  live: number;
}

export class Slots {
  readonly #limits: Limits;
  /** Per job: owner number × OWNER_UNIT + wait code × POS_SPAN + position code. */
  readonly #jobs = new Map<string, number>();
  /** Per job that left a queue out of turn: how many of its entries there are stale. */
  readonly #stale: Record<WaitStep, Map<string, number>> = {
    ACCEPT: new Map(),
    PREPARING: new Map(),
    SUBMIT: new Map(),
    FINISHING: new Map(),
  };
  readonly #ownerNo = new Map<string, number>();
  readonly #ownerName: string[] = [];
  readonly #inStep: Record<SlotStep, number> = { PREPARING: 0, SUBMIT: 0, FINISHING: 0 };
  /** Jobs in position SUBMIT (being submitted), of those counted in the SUBMIT step. */
  #submitting = 0;
  /** Most jobs being submitted at once (0: no bound). */
  readonly #maxSubmitting: number;
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

  /** When configured: who takes a free SUBMIT slot (fair share, route limits), in place of the round robin. */
  readonly #chooser: ShareChooser | undefined;

  /** `maxSubmitting`: most jobs in position SUBMIT at once (0: no bound), from the backend. */
  constructor(limits: Limits, chooser?: ShareChooser, maxSubmitting = 0) {
    this.#limits = limits;
    this.#chooser = chooser;
    this.#maxSubmitting = maxSubmitting;
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

  /** Record where a job is now (undefined/final position: forget it); `job`: its record, when at hand (the chooser reads its class). */
  set(id: string, owner: string, pos: Position | undefined, job?: ClassSource): void {
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
        if (p === 'SUBMIT') this.#submitting--;
        if (s === 'SUBMIT') {
          bump(this.#runningPerOwner, o, -1);
          this.#chooser?.counted(id, -1);
        }
        if (p !== 'ACCEPTED') this.#pickedUp--;
        if (IN_PROCESS(p)) this.#perOwner.set(o, (this.#perOwner.get(o) ?? 1) - 1);
      }
    }
    if (pos === undefined || pos === 'FINISHED' || pos === 'DELETED') {
      if (v !== undefined) this.#put(id, Math.floor(v / OWNER_UNIT), wait, 0);
      this.#chooser?.forget(id);
      return;
    }
    this.#put(id, this.#owner(owner), wait, POS_CODE.get(pos)!);
    const s = STEP_OF[pos];
    if (s) this.#inStep[s]++;
    if (pos === 'SUBMIT') this.#submitting++;
    if (s === 'SUBMIT') {
      bump(this.#runningPerOwner, owner, 1);
      this.#chooser?.counted(id, 1, job);
    }
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
    if (step === 'SUBMIT' && this.#maxSubmitting > 0 && this.#submitting >= this.#maxSubmitting) return false;
    const max =
      step === 'PREPARING'
        ? this.#limits.maxPreparing
        : step === 'SUBMIT'
          ? this.#limits.maxRunning
          : this.#limits.maxFinishing;
    return max === 0 || this.#inStep[step] < max;
  }

  /** Jobs being submitted now (position SUBMIT), and their bound (0: none). */
  get submitting(): { readonly n: number; readonly limit: number } {
    return { n: this.#submitting, limit: this.#maxSubmitting };
  }

  /**
   * Whether a job of `owner` may enter `step` now: the step's limit and the owner's limit
   * for it; for SUBMIT with a chooser, also its route limits and no job waiting (`id`).
   */
  mayEnter(step: WaitStep, owner: string, id?: string, job?: ClassSource): boolean {
    if (!this.free(step) || this.#ownerFullFor(step, owner)) return false;
    return step !== 'SUBMIT' || this.#chooser === undefined || id === undefined || this.#chooser.mayEnter(id, job);
  }

  /** The chooser of the SUBMIT step, when configured (why a job waits: its route limit). */
  get chooser(): ShareChooser | undefined {
    return this.#chooser;
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

  wait(step: WaitStep, id: string, owner: string, job?: ClassSource): void {
    const v = this.#jobs.get(id);
    const code = WAIT_CODE[step];
    if (v !== undefined && Math.floor(v / POS_SPAN) % WAIT_SPAN === code) return;
    if (v !== undefined) this.unwait(id);
    const ownerNo = this.#owner(owner);
    if (step === 'SUBMIT' && this.#chooser !== undefined) {
      this.#chooser.wait(id, owner, job);
      this.#waitingCount[step]++;
      this.#put(id, ownerNo, code, v === undefined ? 0 : v % POS_SPAN);
      return;
    }
    let q = this.#waiting[step].get(owner);
    if (!q) {
      this.#waiting[step].set(owner, (q = { ids: [], head: 0, live: 0 }));
      this.#turn[step].push(owner);
    }
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
    this.#waitingCount[step]--;
    if (step === 'SUBMIT' && this.#chooser !== undefined) return this.#chooser.unwait(id);
    const owner = this.#ownerName[ownerNo]!;
    const q = this.#waiting[step].get(owner);
    if (!q) return;
    bump(this.#stale[step], id, 1);
    q.live--;
    if (q.live <= 0) this.#dropOwner(step, owner);
  }

  /**
   * Whether a queue entry for `step` that has just been reached is the job's live one. A
   * stale one is consumed: its count goes down (the invariant puts stale entries first).
   */
  #reachLive(id: string, step: WaitStep): boolean {
    const stale = this.#stale[step];
    if (stale.has(id)) {
      bump(stale, id, -1);
      return false;
    }
    const v = this.#jobs.get(id);
    return v !== undefined && Math.floor(v / POS_SPAN) % WAIT_SPAN === WAIT_CODE[step];
  }

  /** The next live entry of `q`, taken off it; undefined if only stale ones remain. */
  #shiftLive(step: WaitStep, q: Queue): string | undefined {
    while (q.head < q.ids.length) {
      const id = q.ids[q.head++]!;
      if (!this.#reachLive(id, step)) continue;
      if (q.head > 1024 && q.head * 2 > q.ids.length) {
        q.ids = q.ids.slice(q.head);
        q.head = 0;
      }
      return id;
    }
    return undefined;
  }

  /** Keep only live entries, in order. */
  #compact(step: WaitStep, q: Queue): void {
    const ids: string[] = [];
    for (let i = q.head; i < q.ids.length; i++) {
      const id = q.ids[i]!;
      if (this.#reachLive(id, step)) ids.push(id);
    }
    q.ids = ids;
    q.head = 0;
    q.live = ids.length;
  }

  /**
   * Next waiting job for `step`, owners in turn; undefined when none may go now. An
   * ACCEPT job is granted its slot until it is picked up (takeGrant, set).
   */
  takeNext(step: WaitStep): string | undefined {
    if (!this.free(step)) return undefined;
    if (step === 'SUBMIT' && this.#chooser !== undefined) {
      const id = this.#chooser.take((owner) => this.#ownerFullFor('SUBMIT', owner));
      const v = id === undefined ? undefined : this.#jobs.get(id);
      if (id === undefined || v === undefined) return undefined;
      this.#put(id, Math.floor(v / OWNER_UNIT), 0, v % POS_SPAN);
      this.#waitingCount[step]--;
      return id;
    }
    const turn = this.#turn[step];
    for (let n = 0; n < turn.length; n++) {
      const owner = turn.shift() as string;
      const q = this.#waiting[step].get(owner);
      if (!q || q.live <= 0) {
        this.#discard(step, owner);
        continue;
      }
      if (this.#ownerFullFor(step, owner)) {
        turn.push(owner);
        continue;
      }
      const id = this.#shiftLive(step, q);
      if (id === undefined) {
        // Cannot happen while live > 0; recover rather than lose the owner's turn.
        this.#discard(step, owner);
        continue;
      }
      const v = this.#jobs.get(id)!;
      this.#put(id, Math.floor(v / OWNER_UNIT), 0, v % POS_SPAN);
      this.#waitingCount[step]--;
      q.live--;
      if (q.live <= 0) this.#discard(step, owner);
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

  /** Jobs counted in `step` now (SUBMIT: in the batch system). */
  inStepCount(step: SlotStep): number {
    return this.#inStep[step];
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

  /** Stale-entry counts held, over every step (tests: an emptied queue leaves none). */
  get staleCounts(): number {
    return WAIT_STEPS.reduce((n, step) => n + this.#stale[step].size, 0);
  }

  /** Forget an owner's queue for `step` (its turn is handled by the caller), and the counts of its stale entries. */
  #discard(step: WaitStep, owner: string): void {
    const q = this.#waiting[step].get(owner);
    if (q === undefined) return;
    this.#waiting[step].delete(owner);
    const stale = this.#stale[step];
    if (stale.size === 0) return;
    for (let i = q.head; i < q.ids.length; i++) {
      const id = q.ids[i]!;
      if (stale.has(id)) bump(stale, id, -1);
    }
  }

  #dropOwner(step: WaitStep, owner: string): void {
    this.#discard(step, owner);
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
