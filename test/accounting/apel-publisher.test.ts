// The publisher with the real client, signer and store against the fake messaging
// service: every failure the service can give (500, 503, 401 on the token call, 403, a
// hang past the time limit, a cut connection) is retried after a doubling wait, each
// message is marked only once acknowledged, nothing is lost and, without a crash,
// nothing is sent twice; every send is logged with its counts.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDevPki, type DevPki } from '../../src/pki/dev-pki.js';
import { openDatabase, type Db } from '../../src/store/database.js';
import { ApelOutbox, empaId } from '../../src/accounting/apel-outbox.js';
import { ApelPublisher, retryDelay } from '../../src/accounting/apel-publisher.js';
import { AmsClient } from '../../src/messaging/ams-client.js';
import { smimeSigner } from '../../src/messaging/smime-signer.js';
import { FakeAms } from '../helpers/fake-ams.js';
import { insertRecords } from '../helpers/accounting-records.js';
import { until } from '../helpers/poll.js';

const OCT = Date.UTC(2026, 9, 1);

describe('APEL publisher', () => {
  let dir: string;
  let pki: DevPki;
  let ams: FakeAms;
  let db: Db;
  let client: AmsClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ceres-publisher-'));
    pki = await ensureDevPki(join(dir, 'pki'));
    const f = pki.files;
    ams = await FakeAms.start({
      cert: readFileSync(f.hostCert, 'utf8'),
      key: readFileSync(f.hostKey, 'utf8'),
      ca: readFileSync(f.caCert, 'utf8'),
    });
    db = openDatabase(join(dir, 'db'));
    client = new AmsClient({
      host: '127.0.0.1',
      port: ams.port,
      tokenPort: ams.port,
      project: 'accounting',
      topic: 'gLite-APEL',
      cert: readFileSync(f.hostCert, 'utf8'),
      key: readFileSync(f.hostKey, 'utf8'),
      ca: [readFileSync(f.caCert, 'utf8')],
      timeoutMs: 500,
    });
  });
  after(async () => {
    client.close();
    await ams.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits double after each failure in a row, up to the bound', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 10, 100].map((n) => retryDelay(n, 1000, 10_000)),
      [1000, 2000, 4000, 8000, 10_000, 10_000],
    );
  });

  it('retries every kind of failure until each record arrived, exactly once without a crash', async () => {
    const ids = insertRecords(db, 250, { fromMs: OCT, stepMs: 60_000 });
    const outbox = new ApelOutbox(db, {
      site: 'S',
      machineName: 'ce.example.org',
      messages: 'individual',
      batchSize: 25,
    });
    ams.tokenFaults.push(503);
    // A 403 gets a new token first (a revoked one): refused again, it is a failure.
    ams.publishFaults.push(500, 503, 'hang', 'reset', 403, 403);
    const logs: { level: string; obj: Record<string, unknown>; msg: string }[] = [];
    const sent: number[] = [];
    const failed: string[] = [];
    const sign = smimeSigner({ certFile: pki.files.hostCert, keyFile: pki.files.hostKey });
    const p = new ApelPublisher({
      outbox,
      sign: (m) => sign(m.body),
      publish: async (m, signed) => (await client.publish([{ attributes: { empaid: empaId(m) }, data: signed }]))[0]!,
      log: {
        info: (obj, msg) => logs.push({ level: 'info', obj: obj as Record<string, unknown>, msg }),
        warn: (obj, msg) => logs.push({ level: 'warn', obj: obj as Record<string, unknown>, msg }),
      },
      intervalMs: 60_000,
      retryMinMs: 20,
      retryMaxMs: 200,
      onSent: (m) => sent.push(m.records),
      onFailed: (_m, e) => failed.push(e.message),
    });
    p.start();
    try {
      await until(
        () => outbox.backlog().unsentMessages === 0 && outbox.backlog().unqueuedRecords === 0 && sent.length >= 11,
        'every message sent',
        60_000,
      );
    } finally {
      await p.stop();
    }
    assert.equal(failed.length, 6, failed.join('\n'));
    assert.match(failed.join('\n'), /token call.*503/);
    assert.match(failed.join('\n'), /no answer within 500 ms/);
    await ams.verified();
    const texts = ams.received.map((r) => r.text ?? assert.fail(`signature: ${r.signatureError}`)).join('');
    const got = [...texts.matchAll(/^LocalJobId: (\S+)\r?$/gm)].map((x) => x[1]);
    assert.deepEqual(got.sort(), [...ids].sort(), 'every record once');
    const empaids = ams.received.map((r) => r.empaid);
    assert.equal(new Set(empaids).size, empaids.length, 'no message twice');
    assert.deepEqual(sent.slice(0, 10), Array(10).fill(25));
    const line = logs.find((l) => l.msg === 'accounting message sent to APEL')!;
    assert.equal(line.obj.records, 25);
    assert.equal(line.obj.kind, 'individual');
    assert.equal(typeof line.obj.amsId, 'string');
    assert.ok(logs.some((l) => l.level === 'warn' && l.obj.attempts === 1 && typeof l.obj.retryMs === 'number'));
  });

  it('stop does not wait for a send that hangs; the message stays unsent for the next start', async () => {
    insertRecords(db, 5, { fromMs: OCT, stepMs: 1000, prefix: 'hang' });
    const outbox = new ApelOutbox(db, { site: 'S', machineName: 'h', messages: 'individual', batchSize: 25 });
    const p = new ApelPublisher({
      outbox,
      sign: (m) => Promise.resolve(m.body),
      publish: () => new Promise<string>(() => undefined),
      log: { info: () => undefined, warn: () => undefined },
      intervalMs: 60_000,
      retryMinMs: 20,
      retryMaxMs: 200,
    });
    p.start();
    await until(() => outbox.backlog().unsentMessages > 0, 'queued');
    const t0 = Date.now();
    await p.stop(300);
    assert.ok(Date.now() - t0 < 3000);
    assert.ok(outbox.next() !== undefined, 'still to send');
  });
});
