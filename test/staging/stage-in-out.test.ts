// The adapter end to end, as the engine will drive it: a job with two remote inputs
// (one served from the cache the second time), one input uploaded by the client and
// one remote output; then a second job that gets its input without a download.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Stager } from '../../src/staging/stager.js';
import { FileCache } from '../../src/staging/cache/file-cache.js';
import { anonymousCredentials } from '../../src/staging/credentials.js';
import type { StageInFile, StageOutFile, UploadWatch } from '../../src/staging/types.js';
import { TestServer } from './helpers/test-server.js';
import { never, stagingConfig, tempDir } from './helpers/fixtures.js';

describe('stage-in and stage-out of one job', () => {
  it('two remote inputs, one uploaded input and one remote output end in the right places', async (t) => {
    const server = await TestServer.start({ requireCollections: true });
    t.after(() => server.close());
    server.resources.set('/in/data.txt', { body: Buffer.from('remote data\n') });
    server.resources.set('/in/tool.sh', { body: Buffer.from('#!/bin/sh\ncat data.txt upload.txt > result.txt\n') });
    const root = await tempDir(t);
    const config = stagingConfig();
    const cache = await FileCache.open({
      dir: join(root, 'cache'),
      maxBytes: config.cache.maxBytes,
      accessRecheckMs: 3_600_000,
      lockStaleMs: 60_000,
    });
    const stager = new Stager({ config, credentials: anonymousCredentials, cache });

    const sessionDir = join(root, 'sessions', 'job1');
    await mkdir(sessionDir, { recursive: true });
    const uploaded = new Set<string>();
    const uploads: UploadWatch = { isUploaded: (p) => uploaded.has(p) };
    const inputs: StageInFile[] = [
      { name: 'data.txt', source: server.url('/in/data.txt'), executable: false },
      { name: 'tool.sh', source: server.url('/in/tool.sh'), executable: true },
      { name: 'upload.txt', executable: false },
    ];
    const staging = stager.stageIn({ id: 'job1', owner: 'u', sessionDir, files: inputs, uploads }, never);
    // The client's PUT arrives while the downloads run.
    await writeFile(join(sessionDir, 'upload.txt'), 'uploaded by the client\n');
    uploaded.add('/upload.txt');
    const inResult = await staging;
    assert.equal(inResult.ok, true, inResult.failureReason);
    assert.deepEqual(inResult.control.inputStatus, ['/data.txt', '/tool.sh']);
    assert.equal(inResult.control.statistics.length, 2);

    // "The job runs": it produces its result and some scratch.
    await writeFile(
      join(sessionDir, 'result.txt'),
      (await readFile(join(sessionDir, 'data.txt'), 'utf8')) + (await readFile(join(sessionDir, 'upload.txt'), 'utf8')),
    );
    await writeFile(join(sessionDir, 'stdout'), 'done\n');
    await writeFile(join(sessionDir, 'scratch.tmp'), 'x');

    const outputs: StageOutFile[] = [
      {
        name: 'result.txt',
        target: server.url('/out/job1/result.txt', 'dav'),
        when: { success: true, failure: false, cancel: false },
      },
      { name: 'stdout', when: { success: true, failure: true, cancel: true } },
    ];
    const outResult = await stager.stageOut(
      { id: 'job1', owner: 'u', sessionDir, files: outputs, outcome: 'success' },
      never,
    );
    assert.equal(outResult.ok, true, outResult.failureReason);
    assert.equal(server.stored.get('/out/job1/result.txt')?.toString(), 'remote data\nuploaded by the client\n');
    assert.deepEqual(await readdir(sessionDir), ['stdout']);
    assert.equal(outResult.control.outputStatus.length, 1);

    // A second job with the same input: no second download.
    const second = join(root, 'sessions', 'job2');
    await mkdir(second, { recursive: true });
    const r2 = await stager.stageIn(
      { id: 'job2', owner: 'u', sessionDir: second, files: [inputs[0] as StageInFile] },
      never,
    );
    assert.equal(r2.ok, true, r2.failureReason);
    assert.equal(r2.files[0]?.fromCache, true);
    assert.equal(server.count('GET', '/in/data.txt'), 1);
  });
});
