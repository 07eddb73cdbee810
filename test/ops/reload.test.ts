// SIGHUP on a real service process: the log file is reopened after logrotate renamed it,
// and the configuration is reloaded: the reloadable keys (queues, limits, disk marks)
// take effect, others are reported as needing a restart, and a configuration that does
// not load is refused whole with the reason while the running one stays. Also: every
// job event's log line carries the job id.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { sample, scrape } from './scrape.js';

const stateDir = tempDir('reload');
const logFile = join(stateDir, 'ceres.log');
const configFile = join(stateDir, 'test-config.json');
const base = {
  log: { level: 'info', file: logFile },
  metrics: { listen: '127.0.0.1:0' },
  disk: { checkIntervalSeconds: 0.1 },
  cluster: { queues: [{ name: 'a' }] },
};

const lines = (file: string): any[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
    : [];

describe('SIGHUP: log reopen and configuration reload', () => {
  let ceres: RunningCeres;
  let c: Client;
  let hups = 0;
  /** Rewrite the configuration file, send SIGHUP, wait until the service has dealt with it. */
  const hup = async (config: unknown): Promise<void> => {
    writeFileSync(configFile, typeof config === 'string' ? config : JSON.stringify(config));
    const want = ++hups;
    ceres.child.kill('SIGHUP');
    await until(
      () => lines(logFile).filter((l) => /^configuration (reloaded|not reloaded)/.test(l.msg)).length >= want,
      'reload logged',
    );
  };
  const submitTo = async (queue: string): Promise<any> => {
    const r = await c.req('POST', '/rest/1.1/jobs?action=new', `&(executable="/bin/true")(queue="${queue}")`);
    return r.status === 201 ? ([] as any[]).concat(r.json().job)[0] : { 'status-code': String(r.status), ...r.json() };
  };

  before(async () => {
    ceres = await startCeres({ stateDir, config: base });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c?.close();
    if (ceres) await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('reopens the log file after it was renamed (logrotate)', async () => {
    await until(() => lines(logFile).some((l) => l.msg === 'service started'), 'first lines written');
    renameSync(logFile, `${logFile}.1`);
    await c.req('GET', '/rest/1.1/info'); // a line into the renamed file
    await hup(base);
    await c.req('GET', '/rest/1.1/jobs');
    await until(
      () => lines(logFile).some((l) => l.msg === 'request' && /\/jobs$/.test(l.url)),
      'request logged in the new file',
    );
    const fresh = lines(logFile);
    assert.ok(fresh.some((l) => l.msg === 'log file reopened; reloading the configuration'));
    assert.ok(!fresh.some((l) => l.msg === 'service started'));
    const old = lines(`${logFile}.1`);
    assert.ok(old.some((l) => l.msg === 'service started'));
    assert.ok(!old.some((l) => l.msg === 'request' && /\/jobs$/.test(l.url)));
  });

  it('applies reloadable keys (a new queue) and names the changed keys that need a restart', async () => {
    assert.notEqual((await submitTo('b'))['status-code'], '201');
    await hup({ ...base, cluster: { queues: [{ name: 'a' }, { name: 'b' }] }, shutdownTimeoutSeconds: 7 });
    assert.equal((await submitTo('b'))['status-code'], '201');
    const log = lines(logFile);
    const applied = log.filter((l) => l.msg === 'configuration reloaded').at(-1);
    assert.deepEqual(applied.applied, ['cluster.queues']);
    assert.ok(log.some((l) => l.key === 'shutdownTimeoutSeconds' && /not reloadable/.test(l.msg) && l.level === 40));
    // The info document is cached for a second.
    await until(
      async () => /"MappingQueue":"b"/.test((await c.req('GET', '/rest/1.1/info')).text),
      'queue b published',
    );
    assert.ok((sample(await scrape(ceres), 'ceres_config_reloads_total', { result: 'applied' }) ?? 0) >= 2);
  });

  it('refuses a configuration that does not parse or validate, keeps the running one and says why', async () => {
    const good = { ...base, cluster: { queues: [{ name: 'a' }, { name: 'b' }] } };
    await hup('{ not json');
    let refused = lines(logFile).filter(
      (l) => l.msg === 'configuration not reloaded: the running configuration is kept',
    );
    assert.equal(refused.length, 1);
    assert.match(refused[0].reason, /not valid JSON/);
    await hup({ ...good, cluster: { queues: [{ name: 'a' }, { name: 'a' }] } });
    refused = lines(logFile).filter((l) => l.msg === 'configuration not reloaded: the running configuration is kept');
    assert.match(refused[1].reason, /cluster\.queues\.1\.name.*duplicate queue name/);
    await hup({ ...good, engine: { maxActiveJobs: -1 } });
    refused = lines(logFile).filter((l) => l.msg === 'configuration not reloaded: the running configuration is kept');
    assert.match(refused[2].reason, /engine\.maxActiveJobs/);
    // Still the configuration of the last good reload: queue b is there.
    assert.equal((await submitTo('b'))['status-code'], '201');
    assert.equal(sample(await scrape(ceres), 'ceres_config_reloads_total', { result: 'refused' }), 3);
  });

  it('a reloaded disk mark above the free space refuses submissions with 507; lowering it again accepts them', async () => {
    const good = { ...base, cluster: { queues: [{ name: 'a' }, { name: 'b' }] } };
    await hup({ ...good, disk: { ...base.disk, stateLowWater: '100%' } });
    const r = await submitTo('a');
    assert.equal(r['status-code'], '507');
    assert.equal(r.code, 'CE_ERR_DISK_LOW_SPACE');
    assert.match(r.reason, /state file system/);
    const t = await scrape(ceres);
    assert.equal(sample(t, 'ceres_disk_low', { area: 'state' }), 1);
    assert.equal(sample(t, 'ceres_ready'), 0);
    await hup(good);
    assert.equal((await submitTo('a'))['status-code'], '201');
    assert.equal(sample(await scrape(ceres), 'ceres_disk_low', { area: 'state' }), 0);
  });

  it('every job event is logged with the job id', async () => {
    const [item] = await c.submit('&(executable="/bin/echo")(arguments="x")(queue="a")');
    await c.waitFor([item.id], ['FINISHED', 'FAILED']);
    await until(() => lines(logFile).some((l) => l.job === item.id && l.to === 'FINISHED'), 'final state logged');
    const mine = lines(logFile).filter((l) => l.job === item.id);
    assert.ok(mine.some((l) => l.msg === 'job submitted'));
    assert.deepEqual(
      mine.filter((l) => l.msg === 'job state change').map((l) => `${l.from}>${l.to}`),
      ['ACCEPTED>PREPARING', 'PREPARING>SUBMIT', 'SUBMIT>INLRMS', 'INLRMS>FINISHING', 'FINISHING>FINISHED'],
    );
  });
});
