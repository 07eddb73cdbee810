// An upload cut by `kill -9` of the service leaves its hidden temporary file in the
// session directory. The next start removes it (in the background, through
// descriptors) while complete files stay, and nothing behind a link is touched.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

const TEMP = '.ceres-upload.';

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('upload temporaries left by kill -9', () => {
  let ceres: RunningCeres;
  let client: Client;
  let outside: string;
  let dir: string;
  let job: string;

  before(async () => {
    ceres = await startCeres();
    client = Client.forUser(ceres);
    outside = await mkdtemp(join(tmpdir(), 'ceres-outside-'));
    const [item] = await client.submit('&(executable="/bin/true")');
    job = item.id;
    await client.waitFor([job], ['FINISHED']);
    dir = join(ceres.stateDir, 'sessions', job);
  });
  after(async () => {
    await client.close();
    await stopCeres(ceres, 'SIGKILL');
    removeDir(ceres.stateDir);
    await rm(outside, { recursive: true, force: true });
  });

  it('are removed at the next start; complete uploads and files behind links stay', async () => {
    const done = await client.req('PUT', `/rest/1.1/jobs/${job}/session/sub/done.bin`, 'complete\n');
    assert.equal(done.status, 200, done.text);

    // An upload that never ends: the service is killed while it writes the temporary.
    const body = new Readable({ read() {} });
    body.push(Buffer.alloc(256 * 1024, 1));
    const cut = request(`${ceres.url}/rest/1.1/jobs/${job}/session/sub/big.bin`, {
      method: 'PUT',
      body,
      dispatcher: client.agent,
    }).catch((e: unknown) => e);
    const temps = (): string[] => readdirSync(join(dir, 'sub')).filter((n) => n.startsWith(TEMP));
    await until(
      'the upload to write its temporary file',
      () => temps().length === 1 && statSync(join(dir, 'sub', temps()[0] as string)).size > 0,
    );
    const [temp] = temps();
    await stopCeres(ceres, 'SIGKILL');
    await cut;
    assert.ok(existsSync(join(dir, 'sub', temp as string)), 'kill -9 left the temporary behind');

    // Debris-like files behind links in a session: never followed.
    await writeFile(join(outside, `${TEMP}precious`), 'not ours');
    await mkdir(join(outside, 'd'));
    await writeFile(join(outside, 'd', `${TEMP}precious`), 'not ours');
    await symlink(outside, join(dir, 'link-to-outside'));
    await symlink(outside, join(ceres.stateDir, 'sessions', 'zzzzlinked'));

    // At info level: the sweep's line is an info line.
    ceres = await startCeres({ stateDir: ceres.stateDir, config: { log: { level: 'info' } } });
    await until('the temporary to be removed', () => !existsSync(join(dir, 'sub', temp as string)));
    assert.equal(readFileSync(join(dir, 'sub', 'done.bin'), 'utf8'), 'complete\n');
    assert.deepEqual(readdirSync(join(dir, 'sub')), ['done.bin']);
    assert.equal(readFileSync(join(outside, `${TEMP}precious`), 'utf8'), 'not ours');
    assert.equal(readFileSync(join(outside, 'd', `${TEMP}precious`), 'utf8'), 'not ours');
    // The sweep says what it did (docs/operations.md, "Shutdown, crashes and restarts"):
    // sessions looked at, files removed (the one temporary) and its duration.
    const swept = (): { sessions: number; removed: number; ms: number } | undefined =>
      ceres
        .output()
        .split('\n')
        .filter((l) => l.includes('"upload debris swept"'))
        .map((l) => JSON.parse(l) as { sessions: number; removed: number; ms: number })[0];
    await until('the sweep to be logged', () => swept() !== undefined);
    assert.equal(swept()?.removed, 1);
    assert.ok((swept()?.sessions ?? 0) >= 1);
    assert.equal(typeof swept()?.ms, 'number');
    // The service answers as usual (the sweep ran in the background).
    await client.close();
    client = Client.forUser(ceres);
    assert.equal((await client.req('GET', `/rest/1.1/jobs/${job}/session/sub/done.bin`)).text, 'complete\n');
  });
});
