// The monitoring role with the real service and real VOMS proxies (voms-proxy-fake): a
// VO manager (role /atlas/Role=VO-Admin, config authorization.monitors) lists and follows
// the jobs of VO atlas that a member submitted, through the list, its filters and cursor,
// since= and the event stream; every action on such a job (kill, clean, restart,
// delegations) answers 403 per item, and its session and control files 403. A member
// without the role, and the manager for another VO, are refused the view.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { toOneline } from '../../src/pki/dn.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { dataOf, openStream, type SseStream } from '../helpers/sse.js';
import { runVomsProxyFake, serverFromCaFiles, vomsSkip } from '../auth/voms/voms-fixture.js';

const HOST = 'voms.example.org';
const JOB = '&(executable="/bin/echo")(arguments="out")(jobname="analysis")(stdout="out.txt")';

describe('monitoring role (real service, real VOMS proxies)', { skip: vomsSkip }, () => {
  let work: string;
  let ceres: RunningCeres;
  const files: Record<string, string> = {};
  const clients: Client[] = [];
  const streams: SseStream[] = [];
  let member: Client;
  let manager: Client;
  let memberJob = '';
  const client = (name: string): Client => {
    const c = new Client(ceres.url, files[name]!, join(ceres.pkiDir, 'ca.pem'));
    clients.push(c);
    return c;
  };
  const idsOf = (r: { json: () => any }): string[] => ((r.json().job ?? []) as { id: string }[]).map((j) => j.id);
  const post = (c: Client, query: string, ids: string[]) =>
    c.req('POST', `/rest/1.1/jobs?${query}`, JSON.stringify({ job: ids.map((id) => ({ id })) }), {
      'content-type': 'application/json',
    });

  before(async () => {
    work = tempDir('monitoring');
    const pki = await initDevPki(join(work, 'state', 'pki'));
    const server = await serverFromCaFiles(work, pki.files.caCert, pki.files.caKey, HOST);
    const vomsDir = join(work, 'vomsdir');
    for (const vo of ['atlas', 'cms']) {
      mkdirSync(join(vomsDir, vo), { recursive: true });
      writeFileSync(join(vomsDir, vo, `${HOST}.lsc`), `${server.dn}\n${toOneline(server.cert.issuer)}\n`);
    }
    const certDir = pki.files.certificatesDir;
    const boss = await addDevUser(pki.dir, 'atlasboss');
    const write = (name: string, pem: string): void => {
      files[name] = join(work, `${name}.pem`);
      writeFileSync(files[name], pem, { mode: 0o600 });
    };
    const user = { certFile: pki.files.userCert, keyFile: pki.files.userKey };
    const bossCred = { certFile: boss.certFile, keyFile: boss.keyFile };
    const proxy = async (cred: typeof user, vo: string, fqan: string) =>
      (await runVomsProxyFake(work, certDir, cred, { vo, fqans: [fqan], server, host: HOST })).pem;
    write('member', await proxy(user, 'atlas', '/atlas/Role=NULL/Capability=NULL'));
    write('manager', await proxy(bossCred, 'atlas', '/atlas/Role=VO-Admin/Capability=NULL'));
    write('cmsmember', await proxy(user, 'cms', '/cms/Role=NULL/Capability=NULL'));
    ceres = await startCeres({
      stateDir: join(work, 'state'),
      config: {
        vomsDir,
        authorization: {
          groups: [
            { name: 'users', match: [{ voms: '/atlas' }, { voms: '/cms' }] },
            { name: 'atlas-managers', match: [{ voms: '/atlas/Role=VO-Admin' }] },
          ],
          allow: ['users'],
          monitors: [{ group: 'atlas-managers', vos: ['atlas'] }],
        },
        cluster: { queues: [{ name: 'main' }] },
        events: { heartbeatSeconds: 0.5 },
      },
    });
    member = client('member');
    manager = client('manager');
    const [item] = await member.submit(JOB);
    assert.equal(item['status-code'], '201', JSON.stringify(item));
    memberJob = item.id as string;
    // Its session files exist once it has run.
    const end = await member.waitFor([memberJob], ['FINISHED', 'FAILED'], 120_000);
    assert.equal(end.get(memberJob), 'FINISHED');
  });
  after(async () => {
    for (const s of streams) s.close();
    for (const c of clients) await c.close();
    if (ceres !== undefined) await stopCeres(ceres);
    removeDir(work);
  });

  it("the manager lists the member's atlas jobs with monitor=atlas (filters and cursor too); its own list stays its own", async () => {
    const seen = await manager.req('GET', '/rest/1.1/jobs?monitor=atlas');
    assert.equal(seen.status, 200, seen.text);
    assert.deepEqual(idsOf(seen), [memberJob]);
    assert.deepEqual(idsOf(await manager.req('GET', '/rest/1.1/jobs?monitor=atlas&name=analysis&limit=1')), [
      memberJob,
    ]);
    assert.deepEqual(idsOf(await manager.req('GET', '/rest/1.1/jobs?monitor=atlas&state=RUNNING')), []);
    assert.deepEqual(idsOf(await manager.req('GET', '/rest/1.1/jobs')), [], 'a plain list: its own jobs (none)');
  });

  it('the manager reads states and documents with monitor=atlas, and the changes with since=', async () => {
    const st = await post(manager, 'action=status&monitor=atlas', [memberJob]);
    assert.equal(st.json().job[0].state, 'FINISHED');
    const info = await post(manager, 'action=info&monitor=atlas', [memberJob]);
    assert.equal(info.json().job[0]['status-code'], '200');
    assert.equal(info.json().job[0].info_document.ComputingActivity.Name, 'analysis');
    const since = await post(manager, 'action=status&monitor=atlas&since=0', []);
    assert.equal(since.status, 201, since.text);
    assert.deepEqual(idsOf(since), [memberJob]);
    assert.ok(Number(since.headers['ceres-sequence']) > 0);
    // Without monitor= the job is another owner's: not found, as ever.
    assert.equal((await post(manager, 'action=status', [memberJob])).json().job[0]['status-code'], '404');
  });

  it("the manager follows the VO's jobs on the event stream: a new job of the member arrives", async () => {
    const s = await openStream(manager.agent, `${ceres.url}/rest/1.1/jobs?monitor=atlas`, manager.headers);
    streams.push(s);
    assert.equal(s.status, 200, s.text);
    const [item] = await member.submit(JOB);
    const e = await s.waitFor((x) => x.event === 'state' && x.data.includes(item.id as string), 'the new job', 60_000);
    assert.equal(dataOf(e).id, item.id);
    // A job of another VO never arrives: the member's cms job.
    const cms = client('cmsmember');
    const [other] = await cms.submit(JOB);
    await member.waitFor([item.id as string], ['FINISHED', 'FAILED'], 120_000);
    await s.waitFor(
      (x) => x.event === 'state' && x.data.includes(item.id as string) && dataOf(x).state === 'FINISHED',
      'the end of the atlas job',
      60_000,
    );
    assert.ok(!s.events.some((x) => x.data.includes(other.id as string)), 'no event of the cms job');
  });

  it('every action of the manager on a monitored job answers 403 per item, and changes nothing', async () => {
    for (const action of ['kill', 'clean', 'restart', 'delegations']) {
      for (const q of [`action=${action}`, `action=${action}&monitor=atlas`]) {
        const r = await post(manager, q, [memberJob]);
        assert.equal(r.status, 201, `${q}: ${r.text}`);
        const [it] = r.json().job;
        assert.equal(it['status-code'], '403', `${q}: ${JSON.stringify(it)}`);
        assert.match(it.reason, /monitor/);
      }
    }
    const st = await member.status([memberJob]);
    assert.equal(st.get(memberJob), 'FINISHED', 'the clean was not taken');
    const ls = await member.req('GET', `/rest/1.1/jobs/${memberJob}/session/out.txt`);
    assert.equal(ls.status, 200, 'the member still reads its file');
  });

  it("the manager can neither read nor write the monitored job's session files nor its control files: 403", async () => {
    const base = `/rest/1.1/jobs/${memberJob}`;
    for (const [method, path] of [
      ['GET', `${base}/session/out.txt`],
      ['GET', `${base}/session/`],
      ['HEAD', `${base}/session/out.txt`],
      ['PUT', `${base}/session/evil.txt`],
      ['PATCH', `${base}/session/out.txt?offset=0`],
      ['DELETE', `${base}/session/out.txt`],
      ['PROPFIND', `${base}/session/`],
      ['GET', `${base}/diagnose/description`],
      ['GET', `${base}/diagnose/errors`],
    ] as const) {
      const r = await manager.req(method, path, method === 'PUT' || method === 'PATCH' ? 'x' : undefined);
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      if (method !== 'HEAD') assert.equal(r.json().code, 'CE_ERR_JOB_MONITOR_READ_ONLY', `${method} ${path}`);
    }
    const out = await member.req('GET', `${base}/session/out.txt`);
    assert.equal(out.text, 'out\n', 'the file is untouched');
  });

  it('a member without the role, and the manager for a VO it does not monitor, are refused the view: 403', async () => {
    for (const [c, q] of [
      [member, '/rest/1.1/jobs?monitor=atlas'],
      [manager, '/rest/1.1/jobs?monitor=cms'],
    ] as const) {
      const r = await c.req('GET', q);
      assert.equal(r.status, 403, r.text);
      assert.equal(r.json().code, 'CE_ERR_JOB_NOT_MONITOR');
    }
    const s = await openStream(member.agent, `${ceres.url}/rest/1.1/jobs?monitor=atlas`, member.headers);
    streams.push(s);
    assert.equal(s.status, 403);
    assert.equal((await post(member, 'action=status&monitor=atlas', [memberJob])).status, 403);
  });
});
