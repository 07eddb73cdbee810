import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Progress } from '../../bench/harness/progress.js';

function sink(isTTY: boolean) {
  const out: string[] = [];
  return { out, s: { isTTY, columns: 40, write: (x: string) => (out.push(x), true) } };
}

test('on a terminal the line is rewritten in place and padded over a longer previous one', () => {
  let now = 0;
  const { out, s } = sink(true);
  const p = new Progress(s, () => now);
  p.update('first line here', true);
  now += 300;
  p.update('short');
  assert.deepEqual(out, ['\rfirst line here', `\rshort${' '.repeat(10)}`]);
  p.done('finished');
  assert.equal(out.at(-2), `\r${' '.repeat(5)}\r`);
  assert.equal(out.at(-1), 'finished\n');
});

test('on a terminal updates are limited to 5 a second unless forced', () => {
  let now = 0;
  const { out, s } = sink(true);
  const p = new Progress(s, () => now);
  p.update('a', true);
  now += 50;
  p.update('b');
  assert.equal(out.length, 1);
  p.update('c', true);
  assert.equal(out.length, 2);
});

test('long lines are cut to the terminal width', () => {
  const { out, s } = sink(true);
  new Progress(s, () => 0).update('x'.repeat(100), true);
  assert.equal(out[0]?.length, 1 + 39);
  assert.ok(out[0]?.endsWith('…'));
});

test('into a file: whole lines, at most one per 15 s', () => {
  let now = 0;
  const { out, s } = sink(false);
  const p = new Progress(s, () => now);
  p.update('one', true);
  now += 1000;
  p.update('two');
  now += 15_000;
  p.update('three');
  assert.deepEqual(out, ['one\n', 'three\n']);
  p.done();
  assert.deepEqual(out, ['one\n', 'three\n']);
});

test('log lines clear the progress line and restore it', () => {
  const { out, s } = sink(true);
  const p = new Progress(s, () => 0);
  p.update('working', true);
  p.log('result');
  assert.deepEqual(out.slice(1), [`\r${' '.repeat(7)}\r`, 'result\n', 'working']);
});
