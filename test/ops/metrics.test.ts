// Prometheus metrics of a real service (`ceres serve`, fork backend) scraped over the
// loopback listener: jobs by state and queue, transitions and time in state, submissions
// and refusals by reason, batch operations, HTTP requests by route template; and who
// cannot read them.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { get, metricsUrl, sample, scrape } from './scrape.js';
import { TestServer } from '../staging/helpers/test-server.js';
import { ceresCli } from '../admin/cli.js';

describe('metrics (loopback listener)', () => {
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres({
      config: { metrics: { listen: '127.0.0.1:0' }, cluster: { queues: [{ name: 'main' }, { name: 'short' }] } },
    });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c?.close();
    if (ceres) await stopCeres(ceres);
    if (ceres) removeDir(ceres.stateDir);
  });

  it('serves the Prometheus text format with the process metrics (memory, event-loop lag)', async () => {
    const r = await get(metricsUrl(ceres));
    assert.equal(r.status, 200);
    assert.match(r.type ?? '', /^text\/plain; version=0\.0\.4/);
    assert.ok((sample(r.text, 'process_resident_memory_bytes') ?? 0) > 1e6);
    assert.ok(sample(r.text, 'nodejs_eventloop_lag_seconds') !== undefined);
    assert.equal(sample(r.text, 'ceres_ready'), 1);
    assert.ok((sample(r.text, 'ceres_disk_free_bytes', { area: 'sessions' }) ?? 0) > 0);
  });

  it('a finished job: counted in its state and queue, its transitions and times, the batch submit timed', async () => {
    const [item] = await c.submit('&(executable="/bin/echo")(arguments="hi")(queue="short")');
    assert.equal(item['status-code'], '201');
    assert.equal((await c.waitFor([item.id], ['FINISHED', 'FAILED'])).get(item.id), 'FINISHED');
    const text = await scrape(ceres);
    assert.equal(sample(text, 'ceres_jobs', { state: 'FINISHED', queue: 'short' }), 1);
    assert.equal(sample(text, 'ceres_jobs', { state: 'FINISHED', queue: 'main' }), undefined);
    for (const [from, to] of [
      ['ACCEPTED', 'PREPARING'],
      ['PREPARING', 'SUBMIT'],
      ['SUBMIT', 'INLRMS'],
      ['INLRMS', 'FINISHING'],
      ['FINISHING', 'FINISHED'],
    ] as const) {
      assert.ok((sample(text, 'ceres_job_transitions_total', { from, to }) ?? 0) >= 1, `${from} -> ${to}`);
    }
    for (const state of ['ACCEPTED', 'PREPARING', 'SUBMIT', 'INLRMS', 'FINISHING'])
      assert.ok((sample(text, 'ceres_job_state_duration_seconds_count', { state }) ?? 0) >= 1, state);
    assert.ok(
      (sample(text, 'ceres_batch_command_duration_seconds_count', { backend: 'fork', command: 'submit' }) ?? 0) >= 1,
    );
    assert.ok((sample(text, 'ceres_job_submissions_total', { result: 'created', status: '201' }) ?? 0) >= 1);
    assert.ok(
      (sample(text, 'ceres_http_requests_total', { route: '/rest/{version}/jobs', method: 'POST', status: '201' }) ??
        0) >= 1,
    );
  });

  it('refused submissions are counted by item status, whole-request refusals by error code', async () => {
    const before = await scrape(ceres);
    const bad = await c.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")(queue="nosuch")');
    assert.equal(bad.status, 201); // a bulk answer; the item itself fails
    const anon = await request(`${ceres.url}/rest/1.1/jobs`, {
      dispatcher: new (await import('undici')).Agent({ connect: { rejectUnauthorized: false } }),
    });
    await anon.body.text();
    assert.equal(anon.statusCode, 401);
    const inst = await c.req('POST', '/rest/1.1/jobs?action=new&instances=0', '&(executable="/bin/true")');
    assert.equal(inst.status, 400);
    const text = await scrape(ceres);
    const delta = (name: string, labels: Record<string, string>): number =>
      (sample(text, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
    const item = ([] as any[]).concat(JSON.parse(bad.text).job)[0];
    assert.equal(delta('ceres_job_submissions_total', { result: 'refused', status: String(item['status-code']) }), 1);
    assert.equal(
      delta('ceres_refusals_total', { route: '/rest/{version}/jobs', code: 'CE_ERR_AUTH_NO_CREDENTIALS' }),
      1,
    );
    assert.equal(delta('ceres_refusals_total', { route: '/rest/{version}/jobs', code: 'CE_ERR_JOB_BAD_INSTANCES' }), 1);
  });

  it('labels are route templates, never raw paths: job ids and file names do not appear', async () => {
    const id = 'abcdef0123456789abcdef01';
    const r = await c.req('GET', `/rest/1.1/jobs/${id}/session/secret-name.txt`);
    assert.equal(r.status, 404);
    await c.req('GET', '/rest/1.1/no-such-functionality/x/y');
    await c.req('GET', '/not/under/the/service');
    const text = await scrape(ceres);
    assert.ok(
      !text.includes(id) &&
        !text.includes('secret-name') &&
        !text.includes('no-such-functionality') &&
        !text.includes('/not/under'),
    );
    assert.ok(
      (sample(text, 'ceres_http_requests_total', {
        route: '/rest/{version}/jobs/{id}/session/*',
        method: 'GET',
        status: '404',
      }) ?? 0) >= 1,
    );
    assert.ok(
      (sample(text, 'ceres_http_requests_total', { route: '/rest/unmatched', method: 'GET', status: '404' }) ?? 0) >= 1,
    );
    assert.ok(
      (sample(text, 'ceres_http_requests_total', { route: 'unrouted', method: 'GET', status: '404' }) ?? 0) >= 1,
    );
  });

  it('a user of the service cannot read the metrics on the main port', async () => {
    for (const path of ['/metrics', '/arex/metrics', '/arex/rest/1.1/metrics']) {
      const r = await request(`${new URL(ceres.url).origin}${path}`, { dispatcher: c.agent });
      const body = await r.body.text();
      assert.equal(r.statusCode, 404, path);
      assert.ok(!body.includes('ceres_'), path);
    }
  });

  it('the health paths answer without a client certificate on the main port, and on the metrics listener', async () => {
    // docs/operations.md, "Health": live and ready, for a supervisor and a load balancer.
    const anon = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const base = metricsUrl(ceres).replace(/\/metrics$/, '');
      for (const origin of [new URL(ceres.url).origin, base]) {
        for (const [path, body] of [
          ['/health/live', { status: 'live' }],
          ['/health/ready', { status: 'ready' }],
        ] as const) {
          const r = await request(`${origin}${path}`, { dispatcher: anon });
          assert.equal(r.statusCode, 200, `${origin}${path}`);
          const got = (await r.body.json()) as { status: string };
          // The loopback listener adds each check with its reason; the main port names nothing.
          if (origin === base) assert.equal(got.status, body.status, `${origin}${path}`);
          else assert.deepEqual(got, body, `${origin}${path}`);
        }
      }
    } finally {
      await anon.close();
    }
  });

  it('the metrics listener answers only GET/HEAD of its own paths', async () => {
    const base = metricsUrl(ceres).replace(/\/metrics$/, '');
    assert.equal((await get(`${base}/`)).status, 404);
    assert.equal((await get(`${base}/metrics/../x`)).status, 404);
    const post = await request(`${base}/metrics`, { method: 'POST', body: 'x' });
    await post.body.text();
    assert.equal(post.statusCode, 405);
  });

  // The refused starts run as child processes awaited, never with spawnSync: a test process
  // blocked for longer than the service's keep-alive timeout (a slow start on a loaded
  // machine) later sends its next request on a connection the service has closed meanwhile
  // ("other side closed"), as the event loop never saw the close.
  it('refuses to start with the metrics listener on a non-loopback address', async () => {
    const dir = tempDir('metrics-cfg');
    try {
      const f = join(dir, 'c.json');
      for (const listen of ['0.0.0.0:9464', '192.0.2.1:9464', '[::]:9464']) {
        writeFileSync(f, JSON.stringify({ metrics: { listen } }));
        const r = await ceresCli(['serve', '--listen', '127.0.0.1:0', '--state-dir', join(dir, 's'), '--config', f]);
        assert.equal(r.code, 2, listen);
        assert.match(r.stderr, /metrics\.listen.*loopback/, listen);
      }
    } finally {
      removeDir(dir);
    }
  });

  it('a metrics listener address in use stops the start with a clear message', async () => {
    const port = Number(new URL(metricsUrl(ceres)).port);
    const dir = tempDir('metrics-busy');
    try {
      const f = join(dir, 'c.json');
      writeFileSync(f, JSON.stringify({ metrics: { listen: `127.0.0.1:${port}` } }));
      const r = await ceresCli(['serve', '--listen', '127.0.0.1:0', '--state-dir', join(dir, 's'), '--config', f]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port}`));
    } finally {
      removeDir(dir);
    }
  });

  it('scrape-time job gauges follow the store (no drift): a cleaned job leaves the counts', async () => {
    const [item] = await c.submit('&(executable="/bin/true")(queue="main")');
    await c.waitFor([item.id], ['FINISHED', 'FAILED']);
    await until(
      async () => sample(await scrape(ceres), 'ceres_jobs', { state: 'FINISHED', queue: 'main' }) === 1,
      'job counted',
    );
    await c.action('clean', [item.id]);
    await until(
      async () => sample(await scrape(ceres), 'ceres_jobs', { state: 'FINISHED', queue: 'main' }) === undefined,
      'cleaned job gone from the gauge',
    );
  });
});

describe('staging and delegation metrics', () => {
  let ceres: RunningCeres;
  let c: Client;
  let srv: TestServer;
  before(async () => {
    srv = await TestServer.start();
    srv.resources.set('/in/a.bin', { body: Buffer.alloc(12345, 3) });
    ceres = await startCeres({
      config: {
        metrics: { listen: '127.0.0.1:0' },
        staging: { retry: { initialDelaySeconds: 0.05, maxDelaySeconds: 0.2, maxAttempts: 2 } },
      },
    });
    c = Client.forUser(ceres);
  });
  after(async () => {
    await c?.close();
    if (ceres) await stopCeres(ceres);
    await srv?.close();
    if (ceres) removeDir(ceres.stateDir);
  });

  it('a download counts its bytes and transfer; a failed one its error code', async () => {
    const [ok] = await c.submit(`&(executable="/bin/true")(inputfiles=("a.bin" "${srv.url('/in/a.bin')}"))`);
    const [bad] = await c.submit(`&(executable="/bin/true")(inputfiles=("x" "${srv.url('/in/missing')}"))`);
    const st = await c.waitFor([ok.id, bad.id], ['FINISHED', 'FAILED', 'KILLED']);
    assert.equal(st.get(ok.id), 'FINISHED');
    assert.equal(st.get(bad.id), 'FAILED');
    const text = await scrape(ceres);
    assert.equal(sample(text, 'ceres_staging_bytes_total', { direction: 'in' }), 12345);
    assert.equal(sample(text, 'ceres_staging_transfers_total', { direction: 'in', result: 'ok' }), 1);
    assert.equal(sample(text, 'ceres_staging_transfers_total', { direction: 'in', result: 'failed' }), 1);
    const failures = text.split('\n').filter((l) => l.startsWith('ceres_staging_failures_total{'));
    assert.equal(failures.length, 1);
    assert.match(failures[0] ?? '', /direction="in",code="CE_ERR_STAGING_[A-Z_]+"\} 1$/);
  });

  it('delegations are counted by type and state at scrape', async () => {
    assert.equal(sample(await scrape(ceres), 'ceres_delegations', { type: 'x509', state: 'pending' }), undefined);
    const r = await c.req('POST', '/rest/1.1/delegations?action=new');
    assert.equal(r.status, 201);
    assert.equal(sample(await scrape(ceres), 'ceres_delegations', { type: 'x509', state: 'pending' }), 1);
  });
});

describe('the documentation of the metrics', () => {
  let ceres: RunningCeres;
  before(async () => {
    ceres = await startCeres({ config: { metrics: { listen: '127.0.0.1:0' } } });
  });
  after(async () => {
    if (ceres) await stopCeres(ceres);
    if (ceres) removeDir(ceres.stateDir);
  });

  it('the Grafana dashboard and the operations guide use only names the service exports, and the guide lists them all', async () => {
    const text = await scrape(ceres);
    const exported = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1] as string));
    const base = (n: string): string => n.replace(/_(bucket|sum|count)$/, '');
    const docs = fileURLToPath(new URL('../../../docs/', import.meta.url));
    const dashboard = JSON.parse(readFileSync(join(docs, 'grafana-dashboard.json'), 'utf8'));
    const exprs: string[] = dashboard.panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => t.expr as string));
    assert.ok(exprs.length > 15);
    const used = new Set(
      exprs.flatMap((e) =>
        [...e.matchAll(/\b((?:ceres|nodejs|process)_[a-z0-9_]+)/g)].map((m) => base(m[1] as string)),
      ),
    );
    for (const n of used) assert.ok(exported.has(n), `dashboard uses ${n}, which is not exported`);
    const guide = readFileSync(join(docs, 'operations.md'), 'utf8');
    for (const n of exported)
      if (n.startsWith('ceres_')) assert.ok(guide.includes(`\`${n}\``), `docs/operations.md does not list ${n}`);
  });
});
