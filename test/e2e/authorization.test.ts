// Authorization and account mapping with the real service over real TLS, users of the
// dev PKI: allowed and mapped (grid-mapfile, pool), not allowed, allowed but unmappable,
// a queue refusing a group inside a bulk submission, a grid-mapfile edited while the
// service runs, pool leases across a restart, an exhausted pool; and, without an
// authorization section, the old behaviour.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { addDevUser, initDevPki } from '../../src/pki/dev-pki.js';
import { Client, removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';

const TRUE_JOB = '&(executable="/bin/true")';

function sessions(c: RunningCeres): string[] {
  return readdirSync(join(c.stateDir, 'sessions')).filter((n) => !n.startsWith('.'));
}

/** The service's job records of a one-line DN, read from its database (WAL: a second reader is fine). */
function jobRows(c: RunningCeres, owner: string): { id: string; local_account: string | null }[] {
  const db = new Database(join(c.stateDir, 'ceres.db'), { readonly: true });
  try {
    return db.prepare('SELECT id, local_account FROM jobs WHERE owner_dn = ?').all(owner) as {
      id: string;
      local_account: string | null;
    }[];
  } finally {
    db.close();
  }
}

async function info(c: Client, id: string): Promise<any> {
  const [item] = await c.action('info', [id]);
  return item.info_document.ComputingActivity;
}

describe('authorization and mapping (real service)', () => {
  let stateDir: string;
  let gridMap: string;
  let config: Record<string, unknown>;
  let ceres: RunningCeres;
  const clients: Record<string, Client> = {};
  const dns: Record<string, string> = {};
  const client = (name: string): Client =>
    (clients[name] ??=
      name === 'default'
        ? Client.forUser(ceres)
        : new Client(ceres.url, join(ceres.pkiDir, `${name}-proxy.pem`), join(ceres.pkiDir, 'ca.pem')));
  const closeClients = async (): Promise<void> => {
    for (const [k, c] of Object.entries(clients)) {
      await c.close();
      delete clients[k];
    }
  };

  before(async () => {
    stateDir = tempDir('authz');
    const pki = await initDevPki(join(stateDir, 'pki'));
    dns.default = pki.userDn;
    for (const u of ['alice', 'bob', 'carol', 'dave', 'erin']) dns[u] = (await addDevUser(pki.dir, u)).dn;
    gridMap = join(stateDir, 'grid-mapfile');
    writeFileSync(gridMap, `# local users\n"${dns.alice}" alice_acct,other\nnot a valid line\n`);
    config = {
      authorization: {
        groups: [
          { name: 'local', match: [{ gridMapFile: gridMap }] },
          { name: 'pilots', match: [{ subject: dns.bob }, { subjectPattern: `*/CN=dav?` }] },
          { name: 'unmapped', match: [{ subject: dns.carol }] },
          { name: 'atlas', match: [{ voms: '/atlas' }] },
        ],
        allow: ['local', 'pilots', 'unmapped', 'atlas'],
      },
      mapping: [
        { group: 'local', gridMapFile: gridMap },
        { group: 'pilots', pool: { accounts: ['pool001'] } },
        { group: 'atlas', pool: { accounts: ['atlas001', 'atlas002'] } },
      ],
      cluster: {
        queues: [
          { name: 'main', allow: ['local', 'pilots'] },
          { name: 'pilotq', allow: ['pilots'] },
        ],
      },
    };
    ceres = await startCeres({ stateDir, config });
  });
  after(async () => {
    await closeClients();
    await stopCeres(ceres);
    removeDir(stateDir);
  });

  it('an allowed user submits; the job records the mapped account and its info shows LocalOwner', async () => {
    const [item] = await client('alice').submit(TRUE_JOB);
    assert.equal(item['status-code'], '201');
    const act = await info(client('alice'), item.id);
    assert.equal(act.LocalOwner, 'alice_acct', 'the first account of the grid-mapfile line');
    assert.equal(act.Owner, dns.alice);
    assert.deepEqual(
      jobRows(ceres, dns.alice!),
      [{ id: item.id, local_account: 'alice_acct' }],
      'recorded with the job',
    );
    // alice_acct is no account of this machine: the job fails at its batch submission
    // (it never runs as the service's user); test/e2e/run-as-mapped runs real accounts.
    await client('alice').waitFor([item.id], ['FINISHED', 'FAILED']);
  });

  it('a user in no allowed group gets 403 with a reason on every job request; nothing is created', async () => {
    const before = sessions(ceres);
    const r = await client('default').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    assert.equal(r.status, 403);
    assert.equal(r.json().code, 'CE_ERR_AUTHZ_NOT_ALLOWED');
    assert.match(r.json().reason, /matches no authorization group/);
    assert.equal((await client('default').req('GET', '/rest/1.1/jobs')).status, 403);
    assert.equal((await client('default').req('POST', '/rest/1.1/delegations?action=new')).status, 403);
    assert.deepEqual(sessions(ceres), before, 'no session directory');
    assert.deepEqual(jobRows(ceres, dns.default!), [], 'no job record');
    // The public resources stay readable.
    assert.equal((await client('default').req('GET', '/rest')).status, 200);
    assert.equal((await client('default').req('GET', '/rest/1.1/info')).status, 200);
  });

  it('an allowed user with no mapping for its groups gets 403 with a reason; nothing is created', async () => {
    const before = sessions(ceres);
    const r = await client('carol').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    assert.equal(r.status, 403);
    assert.equal(r.json().code, 'CE_ERR_AUTHZ_NO_MAPPING');
    assert.match(r.json().reason, /no mapping rule applies/);
    assert.deepEqual(sessions(ceres), before);
    assert.deepEqual(jobRows(ceres, dns.carol!), []);
  });

  it('in one bulk submission, the item for a queue the group may not use fails with 403, the other is created', async () => {
    const r = await client('alice').req(
      'POST',
      '/rest/1.1/jobs?action=new',
      `+(${TRUE_JOB}(queue="main"))(${TRUE_JOB}(queue="pilotq"))`,
    );
    assert.equal(r.status, 201);
    const [ok, refused] = r.json().job;
    assert.equal(ok['status-code'], '201');
    assert.equal(refused['status-code'], '403');
    // The item carries its code, and says which groups the queue is open to and which the caller is in.
    assert.equal(refused.code, 'CE_ERR_JOBDESC_QUEUE_FORBIDDEN');
    assert.equal(ok.code, undefined, 'a created item has no code');
    assert.match(
      refused.reason,
      /^Requested queue pilotq does not match any of available queues: queue pilotq is open to the authorization groups pilots, and the caller's groups are local; submit to a queue the caller may use \(main\)/,
    );
    assert.equal((await info(client('alice'), ok.id)).Queue, 'main');
    const listed = (await client('alice').req('GET', '/rest/1.1/jobs')).json().job;
    assert.equal(listed.length, 2, 'the first test job and the allowed item only');
    // The pilots may use their queue.
    const [p] = await client('bob').submit(`${TRUE_JOB}(queue="pilotq")`);
    assert.equal(p['status-code'], '201');
    assert.equal((await info(client('bob'), p.id)).LocalOwner, 'pool001');
  });

  it('the pool exhausted: the next DN of the group gets 403 with a reason', async () => {
    const r = await client('dave').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    assert.equal(r.status, 403);
    assert.equal(r.json().code, 'CE_ERR_AUTHZ_POOL_EXHAUSTED');
    assert.match(r.json().reason, /all 1 pool accounts are leased/);
    assert.deepEqual(jobRows(ceres, dns.dave!), []);
  });

  it('a grid-mapfile edited while the service runs applies without a restart', async () => {
    assert.equal((await client('erin').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB)).status, 403);
    writeFileSync(gridMap, `"${dns.alice}" alice_acct\n"${dns.erin}" erin_acct\n`);
    const deadline = Date.now() + 30_000;
    let r = await client('erin').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    while (r.status === 403 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 200));
      r = await client('erin').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB);
    }
    assert.equal(r.status, 201, r.text);
    const created = [r.json().job].flat()[0];
    assert.equal((await info(client('erin'), created.id)).LocalOwner, 'erin_acct');
    // And taking a line out refuses again.
    writeFileSync(gridMap, `"${dns.alice}" alice_acct\n`);
    const until = Date.now() + 30_000;
    let s = 201;
    while (s !== 403 && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 200));
      s = (await client('erin').req('GET', '/rest/1.1/jobs')).status;
    }
    assert.equal(s, 403);
  });

  it('pool leases persist across a restart: the same DN gets the same account, the pool stays full', async () => {
    await closeClients();
    await stopCeres(ceres);
    ceres = await startCeres({ stateDir, config });
    const [p] = await client('bob').submit(TRUE_JOB);
    assert.equal((await info(client('bob'), p.id)).LocalOwner, 'pool001');
    assert.equal((await client('dave').req('POST', '/rest/1.1/jobs?action=new', TRUE_JOB)).status, 403);
  });
});

describe('without an authorization section', () => {
  let ceres: RunningCeres;
  let c: Client;
  before(async () => {
    ceres = await startCeres();
    await addDevUser(ceres.pkiDir, 'zed');
    c = new Client(ceres.url, join(ceres.pkiDir, 'zed-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
  });
  after(async () => {
    await c.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  it('any user with a certificate of a trusted CA submits, unmapped: as the default account under root, else as the service', async () => {
    const [item] = await c.submit(TRUE_JOB);
    assert.equal(item['status-code'], '201');
    const act = await info(c, item.id);
    assert.equal(act.LocalOwner, process.geteuid?.() === 0 ? 'nobody' : undefined);
    assert.match(act.Owner, /CN=zed$/);
  });
});
