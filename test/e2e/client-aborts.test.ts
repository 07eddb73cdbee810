// Client disconnects against the real service over real TLS: one user aborts hundreds
// of transfers at random points (uploads with and without Content-Range, chunked
// uploads, submissions, id lists, delegation PUTs, downloads) while a second user
// works normally. The service must stay up, answer nobody a 5xx, log no error, leave
// no temporary upload file behind, and store every completed upload intact.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { addDevUser } from '../../src/pki/dev-pki.js';
import { UPLOAD_TEMP_PREFIX } from '../../src/sessions/session-path.js';
import { Client, removeDir, startCeres, stopCeres, type RunningCeres } from '../helpers/service.js';
import { credential, head, readAll, send, tlsConnect, vanish, type Credential } from '../helpers/raw-tls.js';
import { until } from '../helpers/poll.js';

const KiB = 1024;
const MiB = 1024 * KiB;
/** A job that waits for a client upload that never comes: its session stays open. */
const WAITING_JOB = '&(executable="/bin/echo")(inputfiles=("never" ""))(stdout="o")';

/** Deterministic randomness so a failing run can be repeated (seed printed). */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function tempFilesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.name.startsWith(UPLOAD_TEMP_PREFIX)) found.push(join(d, e.name));
      if (e.isDirectory()) walk(join(d, e.name));
    }
  };
  walk(dir);
  return found;
}

/** Problems in the service's log: errors, 5xx answers, descriptor trouble. */
export function logProblems(output: string): string[] {
  return output.split('\n').filter((l) => /EBADF|"level":(50|60)|"status":5\d\d|Assertion|SIGABRT/.test(l));
}

describe('client aborts', () => {
  let ceres: RunningCeres;
  let alice: Client;
  let bob: Client;
  let bobCred: Credential;
  let aliceJob: string;
  let bobJob: string;
  let delegation: string;
  const seed = Number(process.env.CERES_TEST_SEED ?? Date.now() % 1_000_000);
  const rnd = prng(seed);
  const int = (n: number): number => Math.floor(rnd() * n);

  before(async () => {
    ceres = await startCeres({ config: { log: { level: 'info' } } });
    await addDevUser(ceres.pkiDir, 'bob');
    alice = Client.forUser(ceres);
    bob = new Client(ceres.url, join(ceres.pkiDir, 'bob-proxy.pem'), join(ceres.pkiDir, 'ca.pem'));
    bobCred = credential(ceres.pkiDir, 'bob-proxy.pem');
    [{ id: aliceJob }] = await alice.submit(WAITING_JOB);
    [{ id: bobJob }] = await bob.submit(WAITING_JOB);
    const big = await bob.req('PUT', `/rest/1.1/jobs/${bobJob}/session/big.bin`, randomBytes(8 * MiB));
    assert.equal(big.status, 200);
    const d = await bob.req('POST', '/rest/1.1/delegations?action=new');
    assert.equal(d.status, 201);
    delegation = String(d.headers.location).split('/').pop() as string;
  });

  after(async () => {
    await alice.close();
    await bob.close();
    await stopCeres(ceres);
    removeDir(ceres.stateDir);
  });

  const base = () => new URL(ceres.url).pathname;
  const session = (job: string, p: string) => `${base()}/rest/1.1/jobs/${job}/session/${p}`;

  /** Sends `h` and `sent` bytes of a body, waits a moment, and vanishes. */
  async function abortAfter(h: string, body: (n: number) => Buffer, sent: number): Promise<void> {
    const s = await tlsConnect(ceres.port, bobCred);
    const closed = readAll(s);
    s.write(h);
    let left = sent;
    while (left > 0) {
      const n = Math.min(left, 1 + int(256 * KiB));
      if (!(await send(s, body(n)))) break;
      left -= n;
    }
    if (int(2) === 0) await sleep(int(30));
    vanish(s, int(2) === 0);
    await closed;
  }

  const kinds = {
    async put() {
      const len = 1 + int(2 * MiB);
      await abortAfter(
        head('PUT', session(bobJob, `p${int(8)}.bin`), { 'content-length': len }),
        (n) => Buffer.alloc(n, 7),
        int(len),
      );
    },
    async putRange() {
      const len = 1 + int(MiB);
      const start = int(4 * MiB);
      const total = start + len + int(MiB);
      await abortAfter(
        head('PUT', session(bobJob, `r${int(4)}.bin`), {
          'content-length': len,
          'content-range': `bytes ${start}-${start + len - 1}/${total}`,
        }),
        (n) => Buffer.alloc(n, 3),
        int(len),
      );
    },
    async putChunked() {
      let sentChunks = 0;
      const chunks = int(6);
      const s = await tlsConnect(ceres.port, bobCred);
      const closed = readAll(s);
      s.write(head('PUT', session(bobJob, 'chunked.bin'), { 'transfer-encoding': 'chunked' }));
      while (sentChunks++ < chunks) {
        const n = 1 + int(200 * KiB);
        s.write(`${n.toString(16)}\r\n`);
        s.write(Buffer.alloc(n, 5));
        s.write('\r\n');
      }
      await sleep(int(20));
      vanish(s, int(2) === 0);
      await closed;
    },
    async submit() {
      const desc = Buffer.from(`&(executable="/bin/echo")(arguments="${'x'.repeat(4000)}")`);
      await abortAfter(
        head('POST', `${base()}/rest/1.1/jobs?action=new`, { 'content-length': desc.length }),
        (n) => desc.subarray(0, n),
        int(desc.length),
      );
    },
    async idList() {
      const list = Buffer.from(JSON.stringify({ job: Array.from({ length: 200 }, () => ({ id: bobJob })) }));
      await abortAfter(
        head('POST', `${base()}/rest/1.1/jobs?action=status`, {
          'content-length': list.length,
          'content-type': 'application/json',
        }),
        (n) => list.subarray(0, n),
        int(list.length),
      );
    },
    async delegationPut() {
      const pem = Buffer.from(`-----BEGIN CERTIFICATE-----\n${'A'.repeat(3000)}\n`);
      await abortAfter(
        head('PUT', `${base()}/rest/1.1/delegations/${delegation}`, { 'content-length': pem.length + 100 }),
        (n) => pem.subarray(0, n),
        int(pem.length),
      );
    },
    async propfind() {
      const xml = Buffer.from('<?xml version="1.0"?><propfind xmlns="DAV:"><allprop/></propfind>');
      await abortAfter(
        head('PROPFIND', session(bobJob, ''), { 'content-length': xml.length, depth: 1 }),
        (n) => xml.subarray(0, n),
        int(xml.length),
      );
    },
    /** A whole request, then gone before the answer (the server works on for nobody). */
    async gone() {
      const desc = Buffer.from('&(executable="/bin/true")');
      const ids = Buffer.from(JSON.stringify({ job: [{ id: bobJob }] }));
      const pick = int(5);
      const [h, body] =
        pick === 0
          ? [head('POST', `${base()}/rest/1.1/jobs?action=new`, { 'content-length': desc.length }), desc]
          : pick === 1
            ? [
                head('POST', `${base()}/rest/1.1/jobs?action=status`, {
                  'content-length': ids.length,
                  'content-type': 'application/json',
                }),
                ids,
              ]
            : pick === 2
              ? [head('POST', `${base()}/rest/1.1/delegations?action=new`, { 'content-length': 0 }), Buffer.alloc(0)]
              : pick === 3
                ? [head('GET', session(bobJob, ''), {}), Buffer.alloc(0)]
                : [
                    head('PUT', session(bobJob, `g${int(4)}.bin`), { 'content-length': 64 * KiB }),
                    Buffer.alloc(64 * KiB, 4),
                  ];
      const s = await tlsConnect(ceres.port, bobCred);
      const closed = readAll(s);
      await send(s, Buffer.concat([Buffer.from(h), body]));
      if (int(2) === 0) await sleep(int(5));
      vanish(s, int(2) === 0);
      await closed;
    },
    /** Cancelling: a job submitted, killed and cleaned at once (the other user submits meanwhile). */
    async cancel() {
      const sub = await bob.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/sleep")(arguments="5")');
      assert.ok(sub.status < 500, `submit ${sub.status} ${sub.text}`);
      const id = sub.json().job?.[0]?.id as string | undefined;
      if (id === undefined) return;
      for (const action of ['kill', 'clean']) {
        const r = await bob.req('POST', `/rest/1.1/jobs?action=${action}`, JSON.stringify({ job: [{ id }] }), {
          'content-type': 'application/json',
        });
        assert.ok(r.status < 500, `${action} ${r.status} ${r.text}`);
      }
    },
    async download() {
      const s = await tlsConnect(ceres.port, bobCred);
      const want = int(6 * MiB);
      let got = 0;
      const done = new Promise<void>((resolve) => {
        s.on('data', (c: Buffer) => {
          got += c.length;
          if (got >= want) resolve();
        });
        s.once('close', () => resolve());
        s.on('error', () => undefined);
      });
      s.write(head('GET', session(bobJob, 'big.bin'), int(2) ? {} : { range: `bytes=${int(MiB)}-` }));
      await done;
      vanish(s, int(2) === 0);
    },
  };
  type Kind = keyof typeof kinds;

  it(
    'hundreds of aborted transfers: the service stays up, nobody gets a 5xx, nothing is left behind',
    { timeout: 600_000 },
    async (t) => {
      const ABORTS = Number(process.env.CERES_TEST_ABORTS ?? 400);
      const names = Object.keys(kinds) as Kind[];
      const counts = new Map<Kind, number>();
      const statuses: string[] = [];
      let started = 0;
      let aborting = true;

      const aborter = async () => {
        while (started < ABORTS) {
          started++;
          const k = names[int(names.length)] as Kind;
          counts.set(k, (counts.get(k) ?? 0) + 1);
          await kinds[k]();
        }
      };

      // The other user: complete uploads (checked byte for byte), submissions, status.
      const completed: { path: string; data: Buffer }[] = [];
      const worker = async (w: number) => {
        for (let i = 0; aborting; i++) {
          const data = randomBytes(int(3 * MiB));
          const path = `w${w}-${i}.bin`;
          if (int(2) === 0 || data.length < 2) {
            const r = await alice.req('PUT', `/rest/1.1/jobs/${aliceJob}/session/${path}`, data);
            statuses.push(`PUT ${r.status}`);
            assert.equal(r.status, 200, r.text);
          } else {
            const cut = 1 + int(data.length - 1);
            for (const [a, b] of [
              [cut, data.length],
              [0, cut],
            ] as const) {
              const r = await alice.req('PUT', `/rest/1.1/jobs/${aliceJob}/session/${path}`, data.subarray(a, b), {
                'content-range': `bytes ${a}-${b - 1}/${data.length}`,
              });
              statuses.push(`PUT-range ${r.status}`);
              assert.equal(r.status, 200, r.text);
            }
          }
          completed.push({ path, data });
          const got = await alice.req('GET', `/rest/1.1/jobs/${aliceJob}/session/${path}`);
          statuses.push(`GET ${got.status}`);
          assert.equal(got.status, 200);
          if (i % 4 === 0) {
            const s = await alice.req('POST', '/rest/1.1/jobs?action=new', '&(executable="/bin/true")');
            statuses.push(`submit ${s.status}`);
            assert.equal(s.status, 201, s.text);
            const st = await alice.req(
              'POST',
              '/rest/1.1/jobs?action=status',
              JSON.stringify({ job: [{ id: aliceJob }] }),
              { 'content-type': 'application/json' },
            );
            statuses.push(`status ${st.status}`);
            assert.equal(st.status, 201);
          }
        }
      };

      const work = [worker(1), worker(2)];
      const aborters = await Promise.allSettled([aborter(), aborter(), aborter(), aborter(), aborter()]);
      aborting = false;
      const workers = await Promise.allSettled(work);
      const summary = `seed ${seed}: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}; other user: ${statuses.length} requests, ${completed.length} files`;
      await sleep(200);
      assert.equal(ceres.child.exitCode, null, `service exited: ${summary}\n${ceres.output().slice(-3000)}`);
      for (const r of [...aborters, ...workers]) if (r.status === 'rejected') throw r.reason;
      // Every completed upload reads back exactly as sent (after all the aborts).
      for (const { path, data } of completed) {
        const raw = await fetchBytes(path);
        assert.ok(raw.equals(data), `${path}: ${raw.length} bytes read back, ${data.length} sent`);
      }
      await until(
        () => tempFilesUnder(join(ceres.stateDir, 'sessions')).length === 0,
        `no ${UPLOAD_TEMP_PREFIX}* file left`,
      );
      const problems = logProblems(ceres.output());
      assert.equal(
        problems.length,
        0,
        `${summary}; ${problems.length} problems in the log, first:\n${problems
          .slice(0, 6)
          .map((l) => l.slice(0, 400))
          .join('\n')}`,
      );
      assert.equal(ceres.child.exitCode, null);
      t.diagnostic(summary);
    },
  );

  async function fetchBytes(path: string): Promise<Buffer> {
    const r = await request(`${ceres.url}/rest/1.1/jobs/${aliceJob}/session/${path}`, { dispatcher: alice.agent });
    assert.equal(r.statusCode, 200);
    return Buffer.from(await r.body.arrayBuffer());
  }
});
