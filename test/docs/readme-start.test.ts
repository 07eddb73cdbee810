// The README's example of what `ceres serve` prints on start is what it prints: the
// same lines in the same order, `…` standing for what differs per installation.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';

const README = fileURLToPath(new URL('../../../README.md', import.meta.url));

/** The README's fenced block of `ceres:` lines. */
function exampleLines(): string[] {
  const lines = readFileSync(README, 'utf8').split('\n');
  const start = lines.indexOf('ceres: service URL https://127.0.0.1:8443/arex');
  assert.ok(start > 0 && lines[start - 1] === '```', 'the README shows the start output in a fenced block');
  const end = lines.indexOf('```', start);
  return lines.slice(start, end);
}

describe('README start output', () => {
  let ceres: RunningCeres;
  let dir: string;
  before(async () => {
    // The default state directory is ./var: the example shows its PKI folder.
    dir = tempDir('readme');
    ceres = await startCeres({ stateDir: join(dir, 'var') });
  });
  after(async () => {
    await stopCeres(ceres);
    removeDir(dir);
  });

  it('matches what `ceres serve` prints with the development PKI', async () => {
    const expected = exampleLines();
    const printed = () =>
      ceres
        .output()
        .split('\n')
        .filter((l) => l.startsWith('ceres: '));
    await until(() => printed().length >= expected.length, 'the start lines');
    const lines = printed();
    assert.equal(lines.length, expected.length, lines.join('\n'));
    expected.forEach((e, i) => {
      const pattern = new RegExp(
        `^${e
          .split('…')
          .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('.+')}$`,
      );
      // The example shows the default address; the test service listens on a free port.
      const line = (lines[i] as string).replace(/127\.0\.0\.1:\d+/, '127.0.0.1:8443');
      assert.match(line, pattern);
    });
  });
});
