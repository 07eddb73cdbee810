import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import {
  cpuSeconds,
  listeningInodes,
  parseCpuLine,
  parseStat,
  parseVmRssKiB,
  pidsListeningOn,
  rssMiB,
} from '../../bench/harness/proc.js';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:20FB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41234 1 0000000000000000 100 0 0 10 0
   1: 0100007F:20FC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 41235 1 0000000000000000 100 0 0 10 0
   2: 0100007F:20FB 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 51111 1 0000000000000000 20 4 30 10 -1
   3: 00000000:20FB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 100 0 0 10 0
`;

test('listening sockets on a port: LISTEN state only, port matched in hex, inode 0 ignored', () => {
  assert.deepEqual(listeningInodes(TCP, 8443), ['41234']); // 0x20FB; the ESTABLISHED (01) row and inode 0 are skipped
  assert.deepEqual(listeningInodes(TCP, 8444), ['41235']);
  assert.deepEqual(listeningInodes(TCP, 80), []);
  assert.deepEqual(listeningInodes('', 8443), []);
});

test('tcp6 addresses end in the port too', () => {
  const t6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:20FB 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0000000000000000 100 0 0 10 0
`;
  assert.deepEqual(listeningInodes(t6, 8443), ['777']);
});

test('VmRSS from /proc/<pid>/status', () => {
  assert.equal(parseVmRssKiB('Name:\tnode\nVmPeak:\t 1 kB\nVmRSS:\t   45120 kB\nRssAnon:\t 1 kB\n'), 45120);
  assert.equal(parseVmRssKiB('Name:\tkthreadd\n'), undefined);
});

test('CPU ticks and ppid from /proc/<pid>/stat, with spaces and parentheses in the name', () => {
  const stat = '1234 (my (weird) proc) S 77 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 1000 10';
  assert.deepEqual(parseStat(stat), { ppid: 77, ticks: 300 });
  assert.equal(parseStat('garbage'), undefined);
  assert.equal(parseStat('1 (x) S'), undefined);
});

test('machine CPU line: busy excludes idle and iowait', () => {
  assert.deepEqual(parseCpuLine('cpu  100 5 50 1000 20 3 2 0 0 0\ncpu0 1 2 3 4\n'), { busy: 160, total: 1180 });
  assert.equal(parseCpuLine('intr 1 2 3'), undefined);
});

test('this process is found listening on its own port, and its RSS and CPU are readable', async (t) => {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  t.after(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const pids = await pidsListeningOn(port);
  assert.deepEqual(pids, [process.pid]);
  const rss = await rssMiB([process.pid]);
  assert.ok(rss !== undefined && rss > 5 && rss < 4096, String(rss));
  const cpu = await cpuSeconds([process.pid]);
  assert.ok(cpu !== undefined && cpu >= 0);
});

test('unknown pids and free ports give nothing, not errors', async () => {
  assert.equal(await rssMiB([2 ** 22 + 12345]), undefined);
  assert.equal(await cpuSeconds([2 ** 22 + 12345]), undefined);
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  assert.deepEqual(await pidsListeningOn(port), []);
});
