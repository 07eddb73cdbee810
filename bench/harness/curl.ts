/**
 * File transfers with curl, the same client for the endpoint and for the raw
 * baseline, so their ratio measures the servers and not two different clients.
 * Upload: `curl -T FILE` (no `Expect: 100-continue` round trip); download:
 * `curl -o /dev/null`. The rate is bytes / total time (handshake included, which is
 * noise at 1 GiB).
 */
import { execFile } from 'node:child_process';
import { BenchError } from './failures.js';

export interface CurlTls {
  readonly cacert: string;
  readonly cert?: string;
  readonly key?: string;
}

export interface CurlResult {
  readonly status: number;
  readonly bytes: number;
  readonly seconds: number;
  readonly mibPerS: number;
}

/** Parses `%{http_code} %{size_upload} %{size_download} %{time_total}`. */
export function parseCurlWriteOut(text: string, direction: 'up' | 'down'): CurlResult {
  const f = text.trim().split(/\s+/).map(Number);
  const [status, up, down, seconds] = [f[0] ?? 0, f[1] ?? 0, f[2] ?? 0, f[3] ?? 0];
  const bytes = direction === 'up' ? up : down;
  if (!Number.isFinite(status) || !Number.isFinite(bytes) || !(seconds > 0))
    throw new BenchError('http', `unexpected curl output: ${text.slice(0, 80)}`);
  return { status, bytes, seconds, mibPerS: bytes / 2 ** 20 / seconds };
}

export function curlTransfer(
  direction: 'up' | 'down',
  url: string,
  file: string | undefined,
  tls: CurlTls,
  timeoutS: number,
): Promise<CurlResult> {
  const args = [
    '-s',
    '-S',
    '--max-time',
    String(timeoutS),
    '--cacert',
    tls.cacert,
    '-o',
    '/dev/null',
    '-w',
    '%{http_code} %{size_upload} %{size_download} %{time_total}',
  ];
  if (tls.cert !== undefined) args.push('--cert', tls.cert);
  if (tls.key !== undefined) args.push('--key', tls.key);
  if (direction === 'up') {
    if (file === undefined) throw new RangeError('an upload needs a file');
    args.push('-H', 'Expect:', '-T', file);
  }
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('curl', args, { maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
        reject(new BenchError('usage', 'curl is not installed; the transfer scenario needs it'));
        return;
      }
      if (err) {
        reject(
          new BenchError(
            'http',
            `curl ${direction === 'up' ? 'upload to' : 'download from'} ${new URL(url).origin} failed: ${String(stderr).trim().slice(0, 200) || err.message}`,
          ),
        );
        return;
      }
      try {
        const r = parseCurlWriteOut(stdout, direction);
        if (r.status < 200 || r.status > 299) {
          reject(
            new BenchError(
              'http',
              `${direction === 'up' ? 'PUT' : 'GET'} ${new URL(url).pathname} answered HTTP ${r.status}`,
            ),
          );
          return;
        }
        resolve(r);
      } catch (e) {
        reject(e);
      }
    });
  });
}
