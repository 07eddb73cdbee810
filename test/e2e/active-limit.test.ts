// engine.maxActiveJobs (A-REX maxjobs, 1st field) against the real service: past it, new
// jobs stay unprocessed (REST ACCEPTING); a job that ends lets the next one in, owners
// in turn.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

/** Waits for an upload that never comes: active, and runs nothing. */
const WAITING = '(&(executable="/bin/cat")(arguments="in")(inputfiles=("in" "")))';
const ENDED = ['FINISHED', 'FAILED', 'KILLED'];

describe('engine.maxActiveJobs (real service)', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let a: string[] = [];
  let b: string[] = [];

  before(async () => {
    ceres = await startCeres({ config: { engine: { maxActiveJobs: 2 } } });
    await addDevUser(ceres.pkiDir, 'bob');
    alice = Client.forUser(ceres);
    bob = new Client(ceres.url, join(ceres.pkiDir, 'bob-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
  });
  after(async () => {
    for (const [c, ids] of [
      [alice, a],
      [bob, b],
    ] as const) {
      if (c && ids.length) {
        await c.action('kill', ids);
        await c.waitFor(ids, ENDED, 60_000);
      }
    }
    await alice?.close();
    await bob?.close();
    if (ceres) {
      await stopCeres(ceres);
      removeDir(ceres.stateDir);
    }
  });

  /** Polls until the states of all jobs settle into `expect` counts (or times out). */
  async function settle(expect: { picked: number; accepting: number }): Promise<Map<string, string>> {
    const deadline = Date.now() + 30_000;
    let all = new Map<string, string>();
    while (Date.now() < deadline) {
      all = await snapshot();
      const states = [...all.values()];
      const accepting = states.filter((s) => s === 'ACCEPTING').length;
      const picked = states.filter((s) => s !== 'ACCEPTING' && s !== 'KILLING' && !ENDED.includes(s)).length;
      if (picked > 2) assert.fail(`${picked} jobs picked up: ${states.join()}; ${await whyEnded()}`);
      if (picked === expect.picked && accepting === expect.accepting) return all;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`did not settle: ${[...all.values()].join()}`);
  }

  /**
   * Every job's state at one moment. Two users need two requests, and a job of alice's that
   * ends between them frees a slot that bob's job takes: read that way, the ended job would
   * still count as picked up beside its successor. Alice's jobs are read before and after
   * bob's; the snapshot holds only when they did not move meanwhile.
   */
  async function snapshot(): Promise<Map<string, string>> {
    for (;;) {
      const before = await alice.status(a);
      const bobs = b.length ? await bob.status(b) : new Map<string, string>();
      const after = await alice.status(a);
      if ([...before].every(([id, s]) => after.get(id) === s)) return new Map([...before, ...bobs]);
    }
  }

  /** The errors of the jobs that ended, for a failure's message (an unexpected end is the bug to find). */
  async function whyEnded(): Promise<string> {
    const items = [...(await alice.action('info', a)), ...(b.length ? await bob.action('info', b) : [])];
    return JSON.stringify(
      items.map((it) => {
        const act = it.info_document?.ComputingActivity;
        return { id: it.id, state: act?.State, error: act?.Error };
      }),
    );
  }

  it('past the limit new jobs stay ACCEPTING, whoever submits them', async () => {
    a = (await alice.submit(`+${WAITING.repeat(4)}`)).map((j) => j.id as string);
    const st = await settle({ picked: 2, accepting: 2 });
    assert.deepEqual([...st.values()].slice(0, 2), ['PREPARING', 'PREPARING'], 'the first two, in order');
    b = (await bob.submit(WAITING.slice(1, -1))).map((j) => j.id as string);
    await settle({ picked: 2, accepting: 3 });
  });

  it('a job that ends lets the next in, owners in turn', async () => {
    await alice.action('kill', [a[0] as string]);
    let st = await settle({ picked: 2, accepting: 2 });
    assert.equal(st.get(a[0] as string), 'KILLED');
    assert.equal(st.get(a[2] as string), 'PREPARING', "alice's next job, first in the turn");
    await alice.action('kill', [a[1] as string]);
    st = await settle({ picked: 2, accepting: 1 });
    assert.equal(st.get(b[0] as string), 'PREPARING', "then bob's");
    assert.equal(st.get(a[3] as string), 'ACCEPTING');
  });

  it('a waiting job can be killed while it waits, and does not take a slot later', async () => {
    await alice.action('kill', [a[3] as string]);
    assert.equal((await alice.waitFor([a[3] as string], ['KILLED'], 30_000)).get(a[3] as string), 'KILLED');
    await settle({ picked: 2, accepting: 0 });
    await alice.action('kill', [a[2] as string]);
    await settle({ picked: 1, accepting: 0 });
  });
});
