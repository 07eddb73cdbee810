/**
 * Session directory upload and download of a big file (1 GiB; --quick 256 MiB), next
 * to the raw loopback baseline measured in the same run with the same client (curl)
 * and the same key type: endpoint and raw server alternate within each repeat, and
 * the reported ratio is the median of the per-repeat ratios.
 *
 * The file sits in a parked job's session directory. The source is a sparse file, so
 * reading it costs no disk I/O on either side; what lands on the server is written
 * through the page cache, and `sync` runs after each upload, outside the timing, so
 * one upload's write-back does not slow the next transfer. After each repeat the file is
 * deleted on both servers, so every upload writes a new file.
 */
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Scenario, ScenarioRun } from '../harness/runner.js';
import { curlTransfer, type CurlResult } from '../harness/curl.js';
import { startRawServer, type RawServer } from '../raw/baseline.js';
import { median } from '../harness/stats.js';
import { submitBulk } from './job-supply.js';
import { formatNumber } from '../harness/render.js';

const run = promisify(execFile);
const FILE_NAME = 'bench-transfer.bin';

async function sparseFile(path: string, mib: number): Promise<void> {
  const fh = await open(path, 'w');
  try {
    await fh.truncate(mib * 2 ** 20);
  } finally {
    await fh.close();
  }
}

export const transferScenario: Scenario = {
  name: 'transfer',
  title: 'session upload and download of a big file, beside a raw HTTPS baseline',
  async measure(r: ScenarioRun) {
    const s = r.session;
    const mib = r.counts.transferMiB;
    const src = join(s.tmpDir, 'source.bin');
    await sparseFile(src, mib);
    const { ids } = await submitBulk(r, s.client, 'parked', 1, 'bench-transfer');
    const id = ids[0] as string;
    const sessionPath = `${s.client.restBase}/jobs/${id}/session/${FILE_NAME}`;
    const url = `${s.client.origin}${sessionPath}`;
    const tls = { cacert: s.init.paths.ca, cert: s.init.paths.cert, key: s.init.paths.key };
    const timeoutS = Math.max(60, Math.floor(r.timeLeftS()));
    let raw: RawServer | undefined;
    try {
      raw = await startRawServer(join(s.tmpDir, 'raw'), s.serverKey);
      const rawTls = { cacert: raw.cacert };
      const up: CurlResult[] = [];
      const rawUp: CurlResult[] = [];
      const down: CurlResult[] = [];
      const rawDown: CurlResult[] = [];
      for (let i = 0; i < r.counts.transferRuns; i++) {
        r.checkBudget(`after ${i} transfer repeats`);
        // Alternate who goes first, so a drift of the machine does not favour one side.
        const order: ('raw' | 'ep')[] = i % 2 === 0 ? ['raw', 'ep'] : ['ep', 'raw'];
        for (const who of order) {
          r.progress(
            `repeat ${i + 1}/${r.counts.transferRuns}: ${who === 'raw' ? 'raw baseline' : 'endpoint'} upload of ${mib} MiB`,
            true,
          );
          const res =
            who === 'raw'
              ? await curlTransfer('up', raw.url, src, rawTls, timeoutS)
              : await curlTransfer('up', url, src, tls, timeoutS);
          (who === 'raw' ? rawUp : up).push(res);
          await run('sync');
        }
        for (const who of order) {
          r.progress(
            `repeat ${i + 1}/${r.counts.transferRuns}: ${who === 'raw' ? 'raw baseline' : 'endpoint'} download of ${mib} MiB`,
            true,
          );
          const res =
            who === 'raw'
              ? await curlTransfer('down', raw.url, undefined, rawTls, timeoutS)
              : await curlTransfer('down', url, undefined, tls, timeoutS);
          (who === 'raw' ? rawDown : down).push(res);
        }
        // Each upload writes a new file, as a client uploads its inputs: the last one is
        // deleted on both servers first, outside the timing. Writing over a file that still
        // exists makes the page cache take fresh pages while the old ones are held; on a
        // virtual machine whose host reclaims free memory that costs ~3 s of kernel time per
        // GiB (docs/performance.md, "Uploads"), and whether it happens depended on how each
        // server replaced the file, not on its transfer speed.
        await s.client.request('DELETE', sessionPath);
        await raw.removeFile();
        await run('sync');
      }
      const bytes = mib * 2 ** 20;
      for (const [what, list] of [
        ['upload', up],
        ['download', down],
      ] as const) {
        const short = list.find((x) => x.bytes !== bytes);
        if (short) r.note(`a ${what} moved ${short.bytes} bytes instead of ${bytes}`);
      }
      const ratio = (a: CurlResult[], b: CurlResult[]) =>
        median(a.map((x, i) => (100 * x.mibPerS) / (b[i]?.mibPerS ?? Number.NaN)));
      r.param('file MiB', mib);
      r.param('repeats', up.length);
      r.metric('upload_mib_s', 'upload', median(up.map((x) => x.mibPerS)), 'MiB/s', 'higher');
      r.metric(
        'raw_upload_mib_s',
        'upload, raw baseline',
        median(rawUp.map((x) => x.mibPerS)),
        'MiB/s',
        'higher',
        false,
      );
      r.metric('upload_pct_raw', 'upload ÷ raw', ratio(up, rawUp), '%', 'higher', false);
      r.metric('download_mib_s', 'download', median(down.map((x) => x.mibPerS)), 'MiB/s', 'higher');
      r.metric(
        'raw_download_mib_s',
        'download, raw baseline',
        median(rawDown.map((x) => x.mibPerS)),
        'MiB/s',
        'higher',
        false,
      );
      r.metric('download_pct_raw', 'download ÷ raw', ratio(down, rawDown), '%', 'higher', false);
      r.note(
        `raw baseline: node:https, 1 MiB stream chunks, ${s.report.serverKey} certificate; client curl for both; file lands in the page cache`,
      );
      r.note(
        `per-repeat upload MiB/s endpoint ${up.map((x) => formatNumber(x.mibPerS)).join(', ')} / raw ${rawUp.map((x) => formatNumber(x.mibPerS)).join(', ')}`,
      );
    } finally {
      await raw?.stop();
      await s.client.request('DELETE', sessionPath).catch(() => undefined);
    }
  },
};
