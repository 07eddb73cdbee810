/**
 * SIGHUP and the TLS credentials of the real service, with a site's CA directory and host
 * certificate made by openssl. `tls.crlRecheckSeconds` is an hour here, so what changes
 * changes because of the signal: a CA added is trusted at once; a renewed host certificate
 * is served to new connections while a connection kept alive from before goes on working
 * with the old one; a key that is not the certificate's keeps the running pair, and says why.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { copyFileSync, mkdirSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { removeDir, startCeres, stopCeres, tempDir, type RunningCeres } from '../helpers/service.js';
import { until } from '../helpers/poll.js';
import { getAs } from '../helpers/https-as.js';
import { logLines } from '../helpers/log-lines.js';
import { installCa, opensslCa, opensslCert, type OpensslCa, type OpensslCred } from '../helpers/openssl-ca.js';
import { sample, scrape } from '../ops/scrape.js';

const dir = tempDir('trust-sighup');
const caDir = join(dir, 'certificates');
const logFile = join(dir, 'ceres.log');
const hostCert = join(dir, 'hostcert.pem');
const hostKey = join(dir, 'hostkey.pem');
let ceres: RunningCeres;
let hostCa: OpensslCa;
let caA: OpensslCa;
let caB: OpensslCa;
let first: OpensslCred; // the host pair at start
let renewed: OpensslCred; // the host pair after renewal
let alice: OpensslCred;
let bob: OpensslCred;

const lines = (): any[] => logLines(logFile);
const jobs = (who: OpensslCred, agent: https.Agent | false = false) =>
  getAs(`${ceres.url}/rest/1.1/jobs`, who, hostCa.pem, agent);
const fingerprint = (c: OpensslCred) => new X509Certificate(c.pem).fingerprint256;
let hups = 0;
/** Send SIGHUP and wait until the service has dealt with it (the configuration reload comes last). */
async function hup(): Promise<void> {
  const want = ++hups;
  ceres.child.kill('SIGHUP');
  await until(
    () => lines().filter((l) => /^configuration (reloaded|not reloaded)/.test(l.msg)).length >= want,
    'the reload done',
  );
}

before(async () => {
  hostCa = opensslCa(dir, 'host-ca', '/DC=org/DC=ceres-hup/CN=Host CA');
  first = opensslCert(hostCa, 'host-1', '/DC=org/DC=ceres-hup/CN=localhost', { hosts: ['localhost', '127.0.0.1'] });
  renewed = opensslCert(hostCa, 'host-2', '/DC=org/DC=ceres-hup/CN=localhost', { hosts: ['localhost', '127.0.0.1'] });
  caA = opensslCa(dir, 'ca-a', '/DC=org/DC=ceres-hup/CN=Site CA A');
  caB = opensslCa(dir, 'ca-b', '/DC=org/DC=ceres-hup/CN=Site CA B');
  alice = opensslCert(caA, 'alice', '/DC=org/DC=ceres-hup/CN=Alice');
  bob = opensslCert(caB, 'bob', '/DC=org/DC=ceres-hup/CN=Bob');
  mkdirSync(caDir);
  installCa(caDir, caA);
  copyFileSync(first.cert, hostCert);
  copyFileSync(first.key, hostKey);
  ceres = await startCeres({
    stateDir: join(dir, 'state'),
    config: {
      log: { level: 'info', file: logFile },
      metrics: { listen: '127.0.0.1:0' },
      tls: { hostCert, hostKey, caDir, crlRecheckSeconds: 3600 },
    },
  });
});
after(async () => {
  if (ceres) await stopCeres(ceres);
  removeDir(dir);
});

describe('SIGHUP: CA directory and host certificate', () => {
  it('a CA added is trusted at once on SIGHUP (the recheck period is an hour)', async () => {
    assert.equal((await jobs(alice)).status, 200);
    installCa(caDir, caB);
    assert.equal((await jobs(bob)).status, 401, 'not before the signal');
    await hup();
    assert.equal((await jobs(bob)).status, 200, 'at once after it');
    assert.deepEqual(lines().find((l) => l.msg === 'trusted CAs changed')?.added, [caB.dn]);
  });

  it('a renewed host certificate is served to new connections; a kept-alive connection keeps working', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await jobs(alice, agent);
      assert.equal(before.status, 200);
      assert.equal(before.hostFingerprint, fingerprint(first));
      copyFileSync(renewed.key, hostKey);
      copyFileSync(renewed.cert, hostCert);
      await hup();
      const fresh = await jobs(alice);
      assert.equal(fresh.status, 200);
      assert.equal(fresh.hostFingerprint, fingerprint(renewed), 'a new connection gets the renewed certificate');
      const kept = await jobs(alice, agent);
      assert.equal(kept.socket, before.socket, 'the same connection as before the renewal');
      assert.equal(kept.status, 200, 'and it goes on working');
      assert.equal(kept.hostFingerprint, fingerprint(first));
      const line = lines().find((l) => /^host certificate reloaded/.test(l.msg));
      assert.equal(line?.subject, '/DC=org/DC=ceres-hup/CN=localhost');
      assert.equal(line?.fingerprint, fingerprint(renewed).replaceAll(':', '').toLowerCase());
      assert.equal(
        sample(await scrape(ceres), 'ceres_trust_reloads_total', { part: 'host_certificate', result: 'applied' }),
        1,
      );
    } finally {
      agent.destroy();
    }
  });

  it('a key that is not the certificate’s keeps the running pair, and the log says why', async () => {
    copyFileSync(first.cert, hostCert); // the key file still holds the renewed pair's key
    await hup();
    const refused = lines().filter(
      (l) => l.msg === 'host certificate not reloaded: the running certificate and key are kept',
    );
    assert.equal(refused.length, 1);
    assert.equal(refused[0].level, 50);
    assert.match(
      refused[0].reason,
      new RegExp(`host key ${hostKey} is not the key of the host certificate ${hostCert}`),
    );
    const after = await jobs(alice);
    assert.equal(after.status, 200);
    assert.equal(after.hostFingerprint, fingerprint(renewed), 'still the pair that was running');
    assert.equal(
      sample(await scrape(ceres), 'ceres_trust_reloads_total', { part: 'host_certificate', result: 'kept' }),
      1,
    );
    // A second SIGHUP with the pair made whole again takes it.
    copyFileSync(first.key, hostKey);
    await hup();
    assert.equal((await jobs(alice)).hostFingerprint, fingerprint(first));
  });

  it('an unchanged pair and directory at SIGHUP change nothing', async () => {
    const before = lines().filter((l) => /^(host certificate|trusted CAs)/.test(l.msg)).length;
    await hup();
    assert.equal(lines().filter((l) => /^(host certificate|trusted CAs)/.test(l.msg)).length, before);
    assert.equal((await jobs(bob)).status, 200);
  });
});
