/**
 * `npm run build && node --expose-gc dist/bench/tls-peer-chain-memory.js [--rounds 6] [--connections 1500]`
 *
 * What reading each TLS client's chain costs in resident memory (src/http/peer-chain.ts).
 * A TLS server in this process, configured as the service's listener, reads the chain of
 * every connection one way; a child process makes `--connections` connections per round,
 * each presenting the development PKI's proxy and user certificate. After each round the
 * server collects its garbage and reports its RSS. Three ways, each in a process of its
 * own: `none` (the chain is not read: the baseline), `issuer-order` (readPeerChain, as the
 * service does) and `as-sent` (the walk of getPeerX509Certificate().issuerCertificate).
 * A way that does not leak levels off after the first rounds; a leak keeps climbing.
 */
import { fork } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createServer, type TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readPeerChain } from '../src/http/peer-chain.js';
import { tlsServerOptions } from '../src/http/tls-options.js';
import { initDevPki } from '../src/pki/dev-pki.js';

const WAYS = ['none', 'issuer-order', 'as-sent'] as const;
type Way = (typeof WAYS)[number];

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '6' },
    connections: { type: 'string', default: '1500' },
    way: { type: 'string' },
    client: { type: 'string' },
    pki: { type: 'string' },
  },
});
const rounds = Number(values.rounds);
const perRound = Number(values.connections);

function read(way: Way, s: TLSSocket): void {
  if (way === 'issuer-order') readPeerChain(s);
  else if (way === 'as-sent') {
    let c = s.getPeerX509Certificate();
    while (c !== undefined) c = c.issuerCertificate;
  }
}

/** The client side: `perRound` connections, 20 at a time, for every message from the server. */
async function client(port: number, pkiDir: string): Promise<void> {
  const proxy = await readFile(join(pkiDir, 'userproxy.pem'));
  const one = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const c = connect({ port, host: '127.0.0.1', cert: proxy, key: proxy, rejectUnauthorized: false });
      c.on('data', () => undefined);
      c.on('end', () => {
        c.destroy();
        resolve();
      });
      c.on('error', reject);
    });
  process.on('message', (m) => {
    if (m !== 'round') return process.exit(0);
    void (async () => {
      for (let i = 0; i < perRound; i += 20) await Promise.all(Array.from({ length: 20 }, one));
      process.send?.('done');
    })();
  });
  process.send?.('ready');
}

async function server(way: Way, pkiDir: string): Promise<number[]> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  const [certPem, keyPem, caPem] = await Promise.all(
    ['hostcert.pem', 'hostkey.pem', 'ca.pem'].map((f) => readFile(join(pkiDir, f), 'utf8')),
  );
  const srv = createServer(
    tlsServerOptions({ certPem: certPem ?? '', keyPem: keyPem ?? '', caPems: [caPem ?? ''] }),
    (s) => {
      read(way, s);
      s.end('x');
    },
  );
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  const child = fork(fileURLToPath(import.meta.url), [
    '--client',
    String(port),
    '--pki',
    pkiDir,
    '--connections',
    String(perRound),
  ]);
  const next = (): Promise<void> => new Promise((resolve) => child.once('message', () => resolve()));
  await next();
  const rss: number[] = [];
  for (let r = 0; r < rounds; r++) {
    child.send('round');
    await next();
    await new Promise((resolve) => setTimeout(resolve, 200));
    gc();
    gc();
    rss.push(Math.round((process.memoryUsage().rss / 1048576) * 10) / 10);
  }
  child.send('stop');
  srv.close();
  return rss;
}

if (values.client !== undefined) await client(Number(values.client), values.pki ?? '');
else if (values.way !== undefined) {
  console.log(JSON.stringify(await server(values.way as Way, values.pki ?? '')));
} else {
  // The parent: the PKI once, then each way in a fresh process.
  const dir = await mkdtemp(join(tmpdir(), 'ceres-bench-tls-'));
  try {
    await initDevPki(join(dir, 'pki'));
    for (const way of WAYS) {
      const child = fork(
        fileURLToPath(import.meta.url),
        ['--way', way, '--pki', join(dir, 'pki'), '--rounds', String(rounds), '--connections', String(perRound)],
        { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
      );
      let out = '';
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((resolve) => child.on('exit', resolve));
      const rss = JSON.parse(out) as number[];
      // The growth over the last two rounds, per connection: ~0 once a way has levelled off.
      const from = rss[rss.length - 3] ?? 0;
      const last = rss[rss.length - 1] ?? 0;
      const perConnectionKb = ((last - from) * 1048576) / (2 * perRound) / 1000;
      console.log(
        `${way.padEnd(13)} RSS after each round of ${perRound} connections: ${rss.join(', ')} MiB; ` +
          `last two rounds: ${perConnectionKb.toFixed(1)} KB per connection`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
