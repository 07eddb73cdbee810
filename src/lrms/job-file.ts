/**
 * Reading the files a batch job's wrapper leaves in the job's lrms directory (`pid`,
 * `status`, `diag`). A job runs as the service's user under the fork backend, and may
 * share a file system with these directories under others, so it can replace them; a read
 * must therefore:
 *  - not follow a symbolic link (O_NOFOLLOW): a link to a forged `exitcode=0` must not make
 *    a job succeed, and a link to another file must not copy it into the job's diagnose files;
 *  - never wait (O_NONBLOCK): a FIFO would otherwise hold one of the service's four I/O
 *    threads for good, and four of them every file operation of the service;
 *  - be bounded: a job that writes gigabytes into `diag` does not get them read into memory.
 * The wrapper writes each file whole (a link or a rename), so an empty file, a FIFO or any
 * other non-file is never a real record: all are refused alike.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/** The name exists but is not a record a wrapper writes (a link, a FIFO, empty, too large). */
export class NotAJobFileError extends Error {
  override readonly name = 'NotAJobFileError';
}

/** The file's text, undefined when it does not exist; NotAJobFileError when it is not a real record. */
export async function readJobFile(path: string, maxBytes = 64 * 1024): Promise<string | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, READ_FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw new NotAJobFileError(`${path} is a symbolic link`);
    throw e;
  }
  try {
    // Records are a few hundred bytes: start small (a 64 KiB buffer per read, several per
    // job, was a measurable share of the service's garbage) and grow up to the bound.
    let buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, 4096));
    let got = 0;
    for (;;) {
      if (got === buf.length) {
        const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, buf.length * 4));
        buf.copy(bigger, 0, 0, got);
        buf = bigger;
      }
      let n: number;
      try {
        ({ bytesRead: n } = await fh.read(buf, got, buf.length - got, null));
      } catch (e) {
        // EAGAIN: a FIFO with a writer and nothing to read; EISDIR: a directory.
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN' || code === 'EISDIR') throw new NotAJobFileError(`${path} is not a regular file`);
        throw e;
      }
      if (n === 0) break;
      got += n;
      if (got > maxBytes) throw new NotAJobFileError(`${path} is larger than ${maxBytes} bytes`);
    }
    if (got === 0) throw new NotAJobFileError(`${path} is empty or not a regular file`);
    return buf.toString('utf8', 0, got);
  } finally {
    await fh.close();
  }
}
