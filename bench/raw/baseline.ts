/**
 * Starts the raw baseline server (static-server.ts) as a child process with a fresh
 * self-signed certificate whose key has the same type and size as the endpoint's, so
 * the TLS work per byte is the same on both sides of the ratio.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { KeySpec } from '../harness/endpoint.js';
import { BenchError } from '../harness/failures.js';

const run = promisify(execFile);

/** openssl req arguments for a new key of the given type. */
export function newKeyArgs(k: KeySpec): string[] {
  switch (k.type) {
    case 'rsa':
      return ['-newkey', `rsa:${k.bits}`];
    case 'ec':
      return ['-newkey', 'ec', '-pkeyopt', `ec_paramgen_curve:${k.curve}`];
    default:
      return ['-newkey', k.type];
  }
}

export interface RawServer {
  readonly url: string;
  readonly cacert: string;
  readonly pid: number;
  /** Removes the uploaded file, as a DELETE would (not timed). */
  removeFile(): Promise<void>;
  stop(): Promise<void>;
}

/** `answer`: a file every POST is answered with (static-server.ts, `--answer`). */
export async function startRawServer(dir: string, key: KeySpec, answer?: string): Promise<RawServer> {
  await mkdir(dir, { recursive: true });
  const cert = join(dir, 'raw-cert.pem');
  const keyFile = join(dir, 'raw-key.pem');
  try {
    await run('openssl', [
      'req',
      '-x509',
      ...newKeyArgs(key),
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]);
  } catch (e) {
    throw new BenchError(
      'usage',
      `could not make the raw baseline's certificate with openssl: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  const script = fileURLToPath(new URL('./static-server.js', import.meta.url));
  const args = [script, '--cert', cert, '--key', keyFile, '--dir', dir];
  if (answer !== undefined) args.push('--answer', answer);
  const child: ChildProcess = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(
      () => reject(new BenchError('usage', 'the raw baseline server did not start within 15 s')),
      15_000,
    );
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new BenchError('usage', `the raw baseline server exited (${code}): ${err.trim().slice(0, 200)}`));
    });
  });
  return {
    url: `https://127.0.0.1:${port}/file`,
    cacert: cert,
    pid: child.pid ?? 0,
    removeFile: () => rm(join(dir, 'file.bin'), { force: true }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
