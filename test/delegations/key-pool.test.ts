import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import { KeyPool } from '../../src/delegations/x509/key-pool.js';
import { makeCertificateRequest, publicKeyOfPrivatePem } from '../../src/delegations/x509/certificate-request.js';
import { generateRsaKeyPair, spkiOf } from '../../src/pki/keys.js';
import { x509, type CryptoKeyPair } from '../../src/pki/x509-lib.js';

/**
 * A generator the test controls: each call is a pending generation the test resolves or
 * fails, so the pool's order of events is observable. Pairs are labelled objects (the
 * pool never looks inside them); one test below uses real keys end to end.
 */
class Generations {
  readonly pending: { resolve: (p: CryptoKeyPair) => void; reject: (e: Error) => void }[] = [];
  made = 0;
  inFlight = 0;
  maxInFlight = 0;
  readonly generate = (): Promise<CryptoKeyPair> => {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise<CryptoKeyPair>((resolve, reject) => {
      this.pending.push({
        resolve: (p) => {
          this.inFlight--;
          resolve(p);
        },
        reject: (e) => {
          this.inFlight--;
          reject(e);
        },
      });
    });
  };
  /** Complete the oldest pending generation with a new labelled pair. */
  async complete(): Promise<void> {
    const g = this.pending.shift();
    assert.ok(g, 'a generation is pending');
    g.resolve({ label: `pair${++this.made}` } as unknown as CryptoKeyPair);
    await tick();
    await tick();
  }
  async fail(): Promise<void> {
    const g = this.pending.shift();
    assert.ok(g, 'a generation is pending');
    g.reject(new Error('entropy ran out'));
    await tick();
    await tick();
  }
}

const noError = (e: unknown): void => assert.fail(`unexpected error report: ${String(e)}`);
const label = (p: CryptoKeyPair) => (p as unknown as { label: string }).label;

test('key pool: nothing is made before the first request; then it fills to its size, one at a time', async () => {
  const g = new Generations();
  const errors: unknown[] = [];
  const pool = new KeyPool({ size: 3, generate: g.generate, onError: (e) => errors.push(e) });
  await tick();
  assert.equal(g.pending.length, 0, 'no key made for a service nobody delegates to');
  const first = pool.take();
  // The request's own key is made on the spot, the background fill has started beside it.
  assert.equal(g.pending.length, 2);
  await g.complete(); // the on-demand key
  assert.equal(label(await first), 'pair1');
  for (let i = 0; i < 3; i++) await g.complete();
  assert.equal(pool.ready, 3);
  assert.equal(g.pending.length, 0, 'stops at its size');
  assert.equal(g.maxInFlight, 2, 'one background generation at a time (plus the on-demand one)');
  assert.deepEqual(errors, []);
});

test('key pool: prime fills it to its size before any request, one at a time; the first take gets a ready key', async () => {
  const g = new Generations();
  const errors: unknown[] = [];
  const pool = new KeyPool({ size: 2, generate: g.generate, onError: (e) => errors.push(e) });
  pool.prime();
  assert.equal(g.pending.length, 1, 'one background generation at a time');
  await g.complete();
  await g.complete();
  assert.equal(pool.ready, 2);
  assert.equal(g.pending.length, 0, 'stops at its size');
  pool.prime();
  assert.equal(g.pending.length, 0, 'a full pool makes nothing');
  const first = pool.take();
  assert.equal(label(await first), 'pair2', 'a key made ahead, no generation waited for');
  assert.deepEqual(errors, []);
});

test('key pool: every key is handed out once; a take refills the pool', async () => {
  const g = new Generations();
  const pool = new KeyPool({ size: 2, generate: g.generate, onError: noError });
  const t = pool.take();
  await g.complete();
  await t;
  await g.complete();
  await g.complete();
  assert.equal(pool.ready, 2);
  const seen = new Set<string>(['pair1']);
  for (let i = 0; i < 20; i++) {
    const before = g.made;
    const p = pool.take();
    // A ready key comes at once, without waiting for any generation.
    const got = label(await p);
    assert.ok(!seen.has(got), `${got} handed out twice`);
    seen.add(got);
    assert.equal(g.pending.length, 1, 'the take started a refill');
    await g.complete();
    assert.equal(g.made, before + 1);
    assert.equal(pool.ready, 2);
  }
});

test('key pool: a burst larger than the pool gets keys made on the spot, all distinct', async () => {
  const g = new Generations();
  const pool = new KeyPool({ size: 1, generate: g.generate, onError: noError });
  const takes = Array.from({ length: 5 }, () => pool.take());
  // 5 on-demand generations plus one background fill.
  assert.equal(g.pending.length, 6);
  while (g.pending.length > 0) await g.complete();
  const labels = (await Promise.all(takes)).map(label);
  assert.equal(new Set(labels).size, 5);
  assert.equal(pool.ready, 1);
  assert.ok(!labels.includes(label(await pool.take())), 'the pooled key is not one already handed out');
});

test('key pool: size 0 makes every key when asked and keeps none', async () => {
  const g = new Generations();
  const pool = new KeyPool({ size: 0, generate: g.generate, onError: noError });
  const t = pool.take();
  assert.equal(g.pending.length, 1);
  await g.complete();
  await t;
  await tick();
  assert.equal(g.pending.length, 0);
  assert.equal(pool.ready, 0);
});

test('key pool: a failed background generation is reported, ends that fill, and the next take tries again', async () => {
  const g = new Generations();
  const errors: unknown[] = [];
  const pool = new KeyPool({ size: 2, generate: g.generate, onError: (e) => errors.push(e) });
  const t = pool.take();
  await g.complete(); // the on-demand key
  await t;
  await g.fail(); // the background fill
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /entropy ran out/);
  assert.equal(g.pending.length, 0, 'no retry loop against a broken generator');
  assert.equal(pool.ready, 0);
  const t2 = pool.take();
  assert.equal(g.pending.length, 2, 'on demand, and a new fill');
  await g.complete();
  await g.complete();
  await t2;
  assert.equal(pool.ready, 1);
});

test('key pool: a failed on-demand generation fails that request only', async () => {
  const g = new Generations();
  const errors: unknown[] = [];
  const pool = new KeyPool({ size: 1, generate: g.generate, onError: (e) => errors.push(e) });
  const t = pool.take();
  const rejected = assert.rejects(t, /entropy ran out/);
  await g.fail(); // the on-demand key
  await rejected;
  await g.complete(); // the background fill goes on
  assert.equal(pool.ready, 1);
  assert.deepEqual(errors, []);
});

test('key pool: close drops waiting keys and stops the fill; later takes still get fresh keys', async () => {
  const g = new Generations();
  const pool = new KeyPool({ size: 3, generate: g.generate, onError: noError });
  const t = pool.take();
  await g.complete();
  await t;
  await g.complete();
  assert.equal(pool.ready, 1);
  pool.close();
  assert.equal(pool.ready, 0);
  await g.complete(); // the generation in flight at close: dropped
  assert.equal(pool.ready, 0);
  assert.equal(g.pending.length, 0, 'nothing more started');
  const late = pool.take();
  assert.equal(g.pending.length, 1, 'made on the spot, no fill');
  await g.complete();
  assert.equal(label(await late), `pair${g.made}`);
});

test('key pool with real keys: distinct RSA keys, each usable for a certificate request', async () => {
  const pool = new KeyPool({ size: 2, generate: () => generateRsaKeyPair(2048), onError: noError });
  const pairs = [await pool.take(), await pool.take(), await pool.take()];
  const spkis = await Promise.all(pairs.map((p) => spkiOf(p.publicKey)));
  assert.equal(new Set(spkis.map((b) => b.toString('hex'))).size, 3);
  const req = await makeCertificateRequest(pairs[0] as CryptoKeyPair);
  const csr = new x509.Pkcs10CertificateRequest(req.csrPem);
  assert.ok(await csr.verify(), 'the request is signed by its own key');
  assert.deepEqual(Buffer.from(csr.publicKey.rawData), publicKeyOfPrivatePem(req.keyPem));
  pool.close();
});
