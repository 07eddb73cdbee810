/**
 * Signs a message as APEL's receiver expects it: S/MIME multipart/signed (a detached
 * PKCS#7 signature with the host certificate), the text part typed `text/plain`, as
 * `openssl smime -sign -text` writes it. Node's crypto has no PKCS#7, so the signature is
 * made by the `openssl` command (docs/architecture.md: src/messaging may start it and
 * nothing else); the message goes through its standard input, the key stays in its
 * file. Each call is one short process (a few milliseconds for a 500-record message).
 */
import { spawn } from 'node:child_process';

export interface SignerOptions {
  readonly certFile: string;
  readonly keyFile: string;
  /** The openssl program (default: `openssl` on the PATH). */
  readonly openssl?: string;
  readonly timeoutMs?: number;
}

export class SigningError extends Error {}

export function smimeSigner(o: SignerOptions): (text: string) => Promise<string> {
  const args = ['smime', '-sign', '-signer', o.certFile, '-inkey', o.keyFile, '-text'];
  return (text) =>
    new Promise((resolve, reject) => {
      const child = spawn(o.openssl ?? 'openssl', args, {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
      // Our own time limit: spawn's `timeout` keeps its timer when the program cannot be
      // started (no exit event), holding the process up for that long.
      const timer = setTimeout(() => child.kill('SIGKILL'), o.timeoutMs ?? 30_000);
      const out: Buffer[] = [];
      let err = '';
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(new SigningError(`openssl could not be started: ${e.message}`));
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
        else
          reject(
            new SigningError(`openssl smime -sign failed (${signal ?? `exit ${code}`}): ${err.trim().slice(0, 500)}`),
          );
      });
      // An early exit (unreadable key) closes the pipe: the write error is the close's to report.
      child.stdin.on('error', () => undefined);
      child.stdin.end(text);
    });
}
