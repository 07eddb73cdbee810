/**
 * The live trust store on the real service, with a site's CA directory made by openssl
 * (hashed names with signing policies and namespaces, as IGTF ships them; CRLs by
 * `openssl ca -gencrl`) and real TLS clients. `tls.crlRecheckSeconds` is 1 here: a CA added
 * to the directory lets its users in without a restart, a CA removed refuses them (on
 * new connections, on a connection kept alive from before from its next request, and an
 * event stream open from before by its next heartbeat), an
 * update caught half way keeps the CAs trusted, and an expired CRL is said once per CA in
 * the log, in a metric and in /health/ready.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { getAs } from '../helpers/https-as.js';
import { logLines } from '../helpers/log-lines.js';
import {
  installCa,
  installCrl,
  opensslCa,
  opensslCert,
  removeCa,
  type OpensslCa,
  type OpensslCred,
} from '../helpers/openssl-ca.js';
import { get, metricsUrl, sample, scrape } from '../ops/scrape.js';
import { Agent } from 'undici';
import { dataOf, openStream } from '../helpers/sse.js';

const HOUR = 3600_000;
const dir = tempDir('trust-live');
const caDir = join(dir, 'certificates');
const logFile = join(dir, 'ceres.log');
let ceres: RunningCeres;
let hostCa: OpensslCa;
let caA: OpensslCa;
let caB: OpensslCa;
let alice: OpensslCred; // under CA A, trusted from the start
let bob: OpensslCred; // under CA B, added and removed while the service runs

const lines = (): any[] => logLines(logFile);
const jobs = (who: OpensslCred, agent: https.Agent | false = false) =>
  getAs(`${ceres.url}/rest/1.1/jobs`, who, hostCa.pem, agent);
/** Ask on new connections until the answer has `status`. */
const until401or200 = async (who: OpensslCred, status: number, what: string) =>
  until(async () => (await jobs(who)).status === status, what, 20_000);

/** Wait for two later looks at the directory: CA B added, then removed again, each logged. */
async function laterLooks(): Promise<void> {
  for (const change of [() => installCa(caDir, caB), () => removeCa(caDir, caB)]) {
    const seen = lines().filter((l) => l.msg === 'trusted CAs changed').length;
    change();
    await until(() => lines().filter((l) => l.msg === 'trusted CAs changed').length > seen, 'a later look');
  }
}

before(async () => {
  hostCa = opensslCa(dir, 'host-ca', '/DC=org/DC=ceres-sites/CN=Host CA');
  const host = opensslCert(hostCa, 'host', '/DC=org/DC=ceres-sites/CN=localhost', {
    hosts: ['localhost', '127.0.0.1'],
  });
  caA = opensslCa(dir, 'ca-a', '/DC=org/DC=ceres-sites/CN=Site CA A');
  caB = opensslCa(dir, 'ca-b', '/DC=org/DC=ceres-sites/CN=Site CA B');
  alice = opensslCert(caA, 'alice', '/DC=org/DC=ceres-sites/CN=Alice');
  bob = opensslCert(caB, 'bob', '/DC=org/DC=ceres-sites/CN=Bob');
  mkdirSync(caDir);
  installCa(caDir, caA);
  installCrl(caDir, caA);
  ceres = await startCeres({
    stateDir: join(dir, 'state'),
    config: {
      log: { level: 'info', file: logFile },
      metrics: { listen: '127.0.0.1:0' },
      tls: { hostCert: host.cert, hostKey: host.key, caDir, crlRecheckSeconds: 1 },
      events: { heartbeatSeconds: 0.5 },
    },
  });
});
after(async () => {
  if (ceres) await stopCeres(ceres);
  removeDir(dir);
});

describe('the trust store follows the CA directory', () => {
  it('prints the CA directory as what it is', () => {
    assert.match(ceres.output(), new RegExp(`^ceres: CA directory ${caDir}$`, 'm'));
    assert.doesNotMatch(ceres.output(), /PKI folder/);
  });

  it('a CA added to the directory lets its users in within the recheck period, without a restart', async () => {
    assert.equal((await jobs(alice)).status, 200);
    assert.equal((await jobs(bob)).status, 401, 'CA B is not trusted yet');
    installCa(caDir, caB);
    const t0 = Date.now();
    await until401or200(bob, 200, 'bob accepted');
    const took = Date.now() - t0;
    assert.ok(took < 10_000, `taken in ${took} ms (recheck period 1 s)`);
    await until(() => lines().some((l) => l.msg === 'trusted CAs changed'), 'the change logged');
    const changed = lines().find((l) => l.msg === 'trusted CAs changed');
    assert.deepEqual(changed?.added, [caB.dn]);
    assert.equal(changed?.cas, 2);
    assert.equal(sample(await scrape(ceres), 'ceres_trusted_cas'), 2);
    // The info document publishes the CAs trusted now (it is cached for a second).
    await until(async () => {
      const r = await getAs(`${ceres.url}/rest/1.1/info`, alice, hostCa.pem);
      return r.text.includes('Site CA B');
    }, 'CA B published');
  });

  it('a CA removed refuses its users on new connections, and on a connection kept alive from before at its next request', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    // And an event stream bob opened before: it ends with the reason by its next heartbeat.
    const streamAgent = new Agent({ connect: { cert: bob.pem, key: bob.keyPem, ca: hostCa.pem } });
    try {
      const first = await jobs(bob, agent);
      assert.equal(first.status, 200);
      const stream = await openStream(streamAgent, `${ceres.url}/rest/1.1/jobs`);
      assert.equal(stream.status, 200, stream.text);
      removeCa(caDir, caB);
      await until401or200(bob, 401, 'bob refused on a new connection');
      const end = await stream.waitFor((e) => e.event === 'end', "bob's stream ended", 20_000);
      assert.equal(dataOf(end).reason, 'not-authorized');
      const again = await jobs(bob, agent);
      assert.equal(again.socket, first.socket, 'the same kept-alive connection');
      assert.equal(again.status, 401, again.text);
      assert.match(again.text, /CE_ERR_AUTH_CERT_INVALID/);
      assert.equal((await jobs(alice)).status, 200, 'the other CA is unaffected');
      await until(() => lines().filter((l) => l.msg === 'trusted CAs changed').length >= 2, 'the change logged');
      const removed = lines()
        .filter((l) => l.msg === 'trusted CAs changed')
        .at(-1);
      assert.deepEqual(removed?.removed, [caB.dn]);
      assert.ok(
        (sample(await scrape(ceres), 'ceres_trust_reloads_total', { part: 'cas', result: 'applied' }) ?? 0) >= 2,
      );
    } finally {
      agent.destroy();
      await streamAgent.destroy();
    }
  });

  it('a CA file cut short during an update keeps its CA trusted, with one warning', async () => {
    const file = join(caDir, `${caA.hash}.0`);
    writeFileSync(file, caA.pem.slice(0, caA.pem.length >> 1));
    await until(() => lines().some((l) => /^CA file not usable/.test(l.msg)), 'the warning');
    const warned = lines().filter((l) => /^CA file not usable/.test(l.msg));
    assert.equal(warned[0].level, 40);
    assert.equal(warned[0].file, `${caA.hash}.0`);
    assert.equal(warned[0].kept, true);
    assert.equal((await jobs(alice)).status, 200, 'alice is still accepted');
    // Later looks (a change they log shows they happened): still trusted, not said again.
    await laterLooks();
    assert.equal((await jobs(alice)).status, 200);
    assert.equal(lines().filter((l) => /^CA file not usable/.test(l.msg)).length, 1);
    writeFileSync(file, caA.pem);
  });

  it('an expired CRL refuses its CA’s users and is said once per CA: a warning, a metric and /health/ready', async () => {
    installCrl(caDir, caA, { lastUpdate: new Date(Date.now() - 48 * HOUR), nextUpdate: new Date(Date.now() - HOUR) });
    await until401or200(alice, 401, 'alice refused');
    for (let i = 0; i < 5; i++) assert.equal((await jobs(alice)).status, 401);
    await until(() => lines().some((l) => /^CRL expired/.test(l.msg)), 'the warning');
    // Later looks and refused connections later, still one line.
    await laterLooks();
    assert.equal((await jobs(alice)).status, 401);
    const warned = lines().filter((l) => /^CRL expired/.test(l.msg));
    assert.equal(warned.length, 1, JSON.stringify(warned));
    assert.equal(warned[0].level, 40);
    assert.equal(warned[0].ca, caA.dn);
    assert.equal(sample(await scrape(ceres), 'ceres_crl_expired_cas'), 1);
    // Ready (other CAs' users are served), with the CA named, on the main port and the loopback one.
    const main = await getAs(`${new URL(ceres.url).origin}/health/ready`, alice, hostCa.pem);
    assert.equal(main.status, 200);
    const body = JSON.parse(main.text);
    assert.equal(body.status, 'ready');
    assert.equal(body.warnings[0].name, 'crls');
    assert.match(
      body.warnings[0].reason,
      /the CRL of \/DC=org\/DC=ceres-sites\/CN=Site CA A expired at .*its users are refused/,
    );
    const loopback = await get(metricsUrl(ceres).replace(/\/metrics$/, '/health/ready'));
    assert.equal(loopback.status, 200);
    assert.match(loopback.text, /Site CA A/);
    assert.equal(sample(await scrape(ceres), 'ceres_ready'), 1);

    installCrl(caDir, caA);
    await until401or200(alice, 200, 'alice accepted again');
    await until(() => lines().some((l) => /^CRL current again/.test(l.msg)), 'the all-clear');
    assert.equal(lines().find((l) => /^CRL current again/.test(l.msg))?.ca, caA.dn);
    assert.equal(sample(await scrape(ceres), 'ceres_crl_expired_cas'), 0);
    const clear = JSON.parse((await getAs(`${new URL(ceres.url).origin}/health/ready`, alice, hostCa.pem)).text);
    assert.deepEqual(clear, { status: 'ready' });
  });
});
