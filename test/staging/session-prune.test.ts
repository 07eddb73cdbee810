import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, symlink, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pruneSession } from '../../src/staging/session-prune.js';
import { tempDir } from './helpers/fixtures.js';

async function tree(dir: string, prefix = ''): Promise<string[]> {
  const out: string[] = [];
  for (const d of await readdir(dir, { withFileTypes: true })) {
    const rel = `${prefix}${d.name}`;
    if (d.isDirectory()) out.push(`${rel}/`, ...(await tree(join(dir, d.name), `${rel}/`)));
    else out.push(d.isSymbolicLink() ? `${rel}@` : rel);
  }
  return out.sort();
}

async function session(t: Parameters<typeof tempDir>[0]): Promise<{ root: string; s: string; outside: string }> {
  const root = await tempDir(t);
  const s = join(root, 'session');
  const outside = join(root, 'outside');
  await mkdir(join(s, 'results', 'deep'), { recursive: true });
  await mkdir(join(s, 'scratch'), { recursive: true });
  await mkdir(join(s, 'gmlog'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, 'precious'), 'must survive');
  for (const f of [
    'stdout',
    'stderr',
    'input.dat',
    'results/a.out',
    'results/deep/b.out',
    'scratch/tmp',
    'gmlog/errors',
  ])
    await writeFile(join(s, f), f);
  await symlink(outside, join(s, 'link-to-outside'));
  await symlink(join(outside, 'precious'), join(s, 'results', 'link-file'));
  return { root, s, outside };
}

describe('session pruning', () => {
  it("'/' keeps the whole session directory", async (t) => {
    const { s } = await session(t);
    const before = await tree(s);
    const r = await pruneSession(s, ['stdout', '/']);
    assert.equal(r.keptAll, true);
    assert.deepEqual(await tree(s), before);
  });

  it('keeps named outputs (stdout, stderr, a gmlog directory) and deletes everything else', async (t) => {
    const { s } = await session(t);
    await pruneSession(s, [{ name: 'stdout' }, { name: '/stderr' }, { name: 'gmlog/' }]);
    assert.deepEqual(await tree(s), ['gmlog/', 'gmlog/errors', 'stderr', 'stdout']);
  });

  it('a directory output keeps its tree; a file inside a directory keeps only that file', async (t) => {
    const { s } = await session(t);
    await pruneSession(s, ['results/deep/b.out', 'scratch']);
    assert.deepEqual(await tree(s), ['results/', 'results/deep/', 'results/deep/b.out', 'scratch/', 'scratch/tmp']);
  });

  it('never follows symbolic links: links are removed as links, their targets survive', async (t) => {
    const { s, outside } = await session(t);
    await pruneSession(s, ['stdout']);
    assert.deepEqual(await tree(s), ['stdout']);
    assert.equal(await readFile(join(outside, 'precious'), 'utf8'), 'must survive');
  });

  it('a kept path through a symlinked directory does not make pruning descend into it', async (t) => {
    const { s, outside } = await session(t);
    await pruneSession(s, ['link-to-outside/precious']);
    assert.deepEqual(await tree(s), []);
    assert.equal(await readFile(join(outside, 'precious'), 'utf8'), 'must survive');
  });

  it('names that leave the session keep nothing and delete nothing outside', async (t) => {
    const { s, outside } = await session(t);
    await pruneSession(s, ['../outside/precious', 'stdout']);
    assert.deepEqual(await tree(s), ['stdout']);
    assert.deepEqual(await readdir(outside), ['precious']);
  });

  it('an empty output list empties the session (raw descriptions keep only what they list)', async (t) => {
    const { s } = await session(t);
    const r = await pruneSession(s, []);
    assert.ok(r.removed > 0);
    assert.deepEqual(await tree(s), []);
  });
});
