// The SUBMIT chooser (src/engine/scheduler/share-chooser.ts): free batch slots go to the
// VOs or routes in proportion to their shares, route limits hold jobs back (waiting,
// never dropped), and ended jobs leave nothing behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ShareChooser,
  jobClassOf,
  type JobClass,
  type ShareSettings,
} from '../../src/engine/scheduler/share-chooser.js';
import { Slots } from '../../src/engine/scheduler/slots.js';

const LIMITS = { maxPreparing: 0, maxRunning: 8, maxFinishing: 0, maxPerUser: 0, maxRunningPerUser: 0 };

function setup(settings: Partial<ShareSettings>, classes: Record<string, JobClass>) {
  // Read per use, as the service's settings are (a reload may change any of them).
  const s: ShareSettings = {
    get by() {
      return settings.by ?? 'vo';
    },
    shareOf: (k) => settings.shareOf?.(k) ?? 1,
    maxRunning: (r) => settings.maxRunning?.(r) ?? 0,
    maxRunningPerVo: (r) => settings.maxRunningPerVo?.(r) ?? 0,
  };
  const chooser = new ShareChooser(s, (id) => classes[id] ?? { route: '', vo: '' });
  const slots = new Slots(LIMITS, chooser);
  /** Hand out every free slot; the ids taken, in order. */
  const fill = (): string[] => {
    const out: string[] = [];
    for (let id = slots.takeNext('SUBMIT'); id !== undefined; id = slots.takeNext('SUBMIT')) {
      slots.set(id, 'u', 'SUBMIT');
      out.push(id);
    }
    return out;
  };
  return { chooser, slots, fill };
}

const voJobs = (vo: string, n: number, route = ''): Record<string, JobClass> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`${vo}${i}`, { route, vo }]));

test('a burst of one VO holds its share: 8 slots, shares 3:1, go 6:2, and a freed slot goes to the VO below its share', () => {
  const classes = { ...voJobs('atlas', 1000), ...voJobs('cms', 10) };
  const { slots, fill, chooser } = setup({ shareOf: (k) => (k === 'atlas' ? 3 : 1) }, classes);
  for (let i = 0; i < 1000; i++) slots.wait('SUBMIT', `atlas${i}`, 'u');
  for (let i = 0; i < 10; i++) slots.wait('SUBMIT', `cms${i}`, 'u');
  const first = fill();
  assert.equal(first.filter((id) => id.startsWith('atlas')).length, 6);
  assert.equal(first.filter((id) => id.startsWith('cms')).length, 2);
  // A cms job ends: a cms job takes its slot; an atlas job ends: an atlas job does.
  slots.set('cms0', 'u', undefined);
  assert.deepEqual(fill(), ['cms2']);
  slots.set('atlas0', 'u', undefined);
  assert.deepEqual(fill(), ['atlas6']);
  assert.equal(chooser.runningOf(''), 8);
  assert.equal(slots.waitingCount('SUBMIT'), 1010 - 10);
});

test('without contention a job goes at once; with a job waiting, a newcomer waits for the choice', () => {
  const { chooser, slots } = setup({}, voJobs('atlas', 3));
  assert.equal(slots.mayEnter('SUBMIT', 'u', 'atlas0'), true);
  slots.wait('SUBMIT', 'atlas1', 'u');
  assert.equal(slots.mayEnter('SUBMIT', 'u', 'atlas2'), false, 'another waits: the chooser decides');
  slots.unwait('atlas1');
  assert.equal(chooser.waiting, 0);
  assert.equal(slots.mayEnter('SUBMIT', 'u', 'atlas2'), true);
});

test("a route's maxRunning and maxRunningPerVo hold its jobs back, waiting, while other routes go on", () => {
  const classes = {
    ...voJobs('atlas', 5, 'short'),
    ...voJobs('cms', 5, 'short'),
    ...voJobs('lhcb', 5, 'long'),
  };
  const { slots, fill, chooser } = setup(
    {
      by: 'route',
      maxRunning: (r) => (r === 'short' ? 3 : 0),
      maxRunningPerVo: (r) => (r === 'short' ? 2 : 0),
    },
    classes,
  );
  for (const id of Object.keys(classes)) slots.wait('SUBMIT', id, 'u');
  const taken = fill();
  const short = taken.filter((id) => classes[id]!.route === 'short');
  assert.equal(short.length, 3, 'route short: at most 3');
  assert.ok(short.filter((id) => id.startsWith('atlas')).length <= 2, 'at most 2 of one VO');
  assert.equal(taken.length, 8, 'the long route fills the rest');
  assert.deepEqual(chooser.holdOf('atlas4'), { limit: 'maxRunning', route: 'short', vo: 'atlas', value: 3 });
  assert.equal(slots.waitingCount('SUBMIT'), 7, 'held jobs wait, none dropped');
});

test('a job killed while waiting is skipped; ended jobs leave no class behind', () => {
  const classes = voJobs('atlas', 4);
  const { slots, fill, chooser } = setup({}, classes);
  for (const id of Object.keys(classes)) slots.wait('SUBMIT', id, 'u');
  slots.unwait('atlas1');
  slots.set('atlas1', 'u', undefined);
  assert.deepEqual(fill(), ['atlas0', 'atlas2', 'atlas3']);
  for (const id of ['atlas0', 'atlas2', 'atlas3']) slots.set(id, 'u', undefined);
  assert.equal(chooser.tracked, 0);
  assert.equal(chooser.waiting, 0);
  assert.equal(slots.tracked, 0);
});

test("a job's class: its route, and the VO of its first FQAN", () => {
  assert.deepEqual(jobClassOf({ route: { name: 'r' }, fqans: ['/atlas/prod/Role=production', '/cms'] }), {
    route: 'r',
    vo: 'atlas',
  });
  assert.deepEqual(jobClassOf({ route: null, fqans: [] }), { route: '', vo: '' });
  assert.deepEqual(jobClassOf(undefined), { route: '', vo: '' });
});

test('settings changed while jobs are in the batch system (a reload): a route limit holds at once, counted from before', () => {
  const classes = { ...voJobs('atlas', 6, 'r'), ...voJobs('cms', 3, 'r') };
  let max = 0;
  let by: ShareSettings['by'] = 'user';
  const { slots, fill, chooser } = setup(
    {
      get by() {
        return by;
      },
      maxRunning: () => max,
    },
    classes,
  );
  for (const id of ['atlas0', 'atlas1', 'atlas2', 'atlas3']) slots.set(id, 'u', 'SUBMIT');
  for (const id of ['atlas4', 'atlas5', 'cms0', 'cms1', 'cms2']) slots.wait('SUBMIT', id, 'u');
  max = 4; // added by a reload: the four jobs there already count
  assert.deepEqual(fill(), []);
  assert.deepEqual(chooser.holdOf('cms0'), { limit: 'maxRunning', route: 'r', vo: 'cms', value: 4 });
  // Lifted, with fair share by VO added: cms (none in the batch system) goes first.
  max = 0;
  by = 'vo';
  assert.deepEqual(fill().slice(0, 3), ['cms0', 'cms1', 'cms2']);
  assert.equal(chooser.runningOf('r', 'cms'), 3);
});

test('fairShare.by changed back and forth while jobs wait: none is lost or taken twice', () => {
  const classes = { ...voJobs('atlas', 20, 'ra'), ...voJobs('cms', 20, 'rb') };
  let by: ShareSettings['by'] = 'vo';
  const { slots, chooser } = setup(
    {
      get by() {
        return by;
      },
    },
    classes,
  );
  for (const id of Object.keys(classes)) slots.wait('SUBMIT', id, 'u');
  const taken: string[] = [];
  const kinds: ShareSettings['by'][] = ['route', 'user', 'vo'];
  for (let i = 0; i < 40; i++) {
    by = kinds[i % 3]!;
    // The 8 slots full: the oldest job in the batch system ends.
    if (slots.inStepCount('SUBMIT') === 8) slots.set(taken[i - 8]!, 'u', undefined);
    const id = slots.takeNext('SUBMIT');
    assert.ok(id !== undefined, `a job taken at ${i}`);
    slots.set(id, 'u', 'SUBMIT');
    taken.push(id);
  }
  assert.equal(new Set(taken).size, 40);
  assert.equal(slots.takeNext('SUBMIT'), undefined);
  assert.equal(chooser.waiting, 0);
});

test('one slot, equal shares: the VOs take turns at the freed slot, the one sorting last by name too', () => {
  // Each time the slot frees, both VOs have no job in the batch system (an even claim): the
  // name used to break the tie, so atlas took every slot and cms never ran.
  const classes = { ...voJobs('atlas', 100), ...voJobs('cms', 3) };
  const s: ShareSettings = { by: 'vo', shareOf: () => 1, maxRunning: () => 0, maxRunningPerVo: () => 0 };
  const chooser = new ShareChooser(s, (id) => classes[id] ?? { route: '', vo: '' });
  const slots = new Slots({ ...LIMITS, maxRunning: 1 }, chooser);
  for (let i = 0; i < 100; i++) slots.wait('SUBMIT', `atlas${i}`, 'u');
  const order: string[] = [];
  let running = slots.takeNext('SUBMIT')!;
  slots.set(running, 'u', 'SUBMIT');
  order.push(running);
  for (let i = 0; i < 3; i++) slots.wait('SUBMIT', `cms${i}`, 'u');
  for (let n = 0; n < 7; n++) {
    slots.set(running, 'u', undefined); // the job ended: the slot is free, no VO holds one
    running = slots.takeNext('SUBMIT')!;
    slots.set(running, 'u', 'SUBMIT');
    order.push(running);
  }
  assert.deepEqual(order, ['atlas0', 'cms0', 'atlas1', 'cms1', 'atlas2', 'cms2', 'atlas3', 'atlas4']);
  assert.equal(chooser.runningOf(''), 1);
});
