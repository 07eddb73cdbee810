// The access log line of every request names the caller's DN and the remote address
// (as docs/operations.md and docs/security.md say), checked on the real service's output.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';

describe('request log lines', () => {
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres({ config: { log: { level: 'info' } } });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  const lines = (): Record<string, unknown>[] =>
    ceres
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((o) => o.msg === 'request');

  it('an authenticated request logs the DN and the remote address', async () => {
    assert.equal((await c.req('GET', '/rest/1.1/jobs')).status, 200);
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = lines().find((l) => l.url === '/arex/rest/1.1/jobs');
      if (!line) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(line, 'a request line');
    assert.match(String(line.dn), /CN=/);
    assert.equal(line.remote, '127.0.0.1');
  });

  it('a refused request (unknown path) still logs who and from where', async () => {
    assert.equal((await c.req('GET', '/rest/1.1/nosuch')).status, 404);
    let line: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !line; i++) {
      line = lines().find((l) => l.url === '/arex/rest/1.1/nosuch');
      if (!line) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(line);
    assert.equal(line.status, 404);
    assert.match(String(line.dn), /CN=/);
    assert.equal(line.remote, '127.0.0.1');
  });
});
