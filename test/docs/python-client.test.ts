// The Python client of docs/compatibility.md ("A Python client that follows a user's jobs"),
// run as written with python3 and requests against the real service: it follows two jobs to
// their ends through the event stream, from event 0 (as after its own restart).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

const DOC = fileURLToPath(new URL('../../../docs/compatibility.md', import.meta.url));

function pythonExample(): string {
  const md = readFileSync(DOC, 'utf8');
  const at = md.indexOf("### A Python client that follows a user's jobs");
  assert.ok(at >= 0, 'the section is there');
  const m = /```python\n([\s\S]*?)```/.exec(md.slice(at));
  assert.ok(m, 'the section has a python block');
  return m[1]!;
}

/**
 * The first python3 that has requests: the one on PATH (what a user types), else Debian's
 * (python3-requests, which CI installs), for machines whose PATH puts another Python first.
 */
function pythonWithRequests(): string {
  for (const py of ['python3', '/usr/bin/python3']) {
    if (spawnSync(py, ['-c', 'import requests'], { stdio: 'ignore' }).status === 0) return py;
  }
  assert.fail('no python3 with requests here: apt-get install python3-requests');
}

describe('the documented Python client (python3, requests, real service)', () => {
  const dir = tempDir('pyclient');
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres({ stateDir: join(dir, 'state'), config: { cluster: { queues: [{ name: 'main' }] } } });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(dir);
  });

  it('follows the named jobs to their ends and exits', async () => {
    const script = join(dir, 'follow.py');
    writeFileSync(script, pythonExample());
    const [ok] = await c.submit('&(executable="/bin/true")(jobname="py-ok")');
    const [bad] = await c.submit('&(executable="/bin/false")(jobname="py-bad")');
    const { stdout } = await promisify(execFile)(
      pythonWithRequests(),
      [script, ceres.url, join(ceres.pkiDir, 'userproxy.pem'), join(ceres.pkiDir, 'ca.pem'), ok.id, bad.id],
      { env: { ...process.env, CERES_LAST_EVENT_ID: '0' }, timeout: 120_000 },
    );
    const lines = stdout.trim().split('\n');
    assert.ok(
      lines.some((l) => l.includes(`${ok.id} FINISHED 0`)),
      stdout,
    );
    assert.ok(
      lines.some((l) => l.includes(`${bad.id} FAILED 1`)),
      stdout,
    );
    assert.ok(
      lines.some((l) => l.includes(`${ok.id} ACCEPTING`)),
      'from the first event: ' + stdout,
    );
    const ids = lines.map((l) => Number(l.split(' ')[0]));
    for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, 'in order, each once');
  });
});
