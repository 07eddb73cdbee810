/**
 * Key material on disk: one directory (mode 0700) of files (mode 0600) readable only
 * by the service. Names are `<delegation id>-<8 random hex>.<kind>`, fresh for every
 * write, so a file is never rewritten in place: a new credential goes to a new file,
 * which is fsync'd (and the directory with it) before the database row is switched to
 * it. The row update is the commit point; a crash before it leaves an unreferenced
 * file, which the sweep removes. Readers therefore never see a half-written file.
 *
 *   kinds: `req`   private key of an outstanding certificate request (PKCS#8 PEM)
 *          `proxy` the delegated proxy file: proxy certificate, its key, the chain
 *          `jwt`   a delegated token
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readFile, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { syncDir } from '../fs/atomic-write.js';

export type KeyFileKind = 'req' | 'proxy' | 'jwt';

const NAME = /^[0-9a-f]{32}-[0-9a-f]{8}\.(req|proxy|jwt)$/;

export class KeyFiles {
  /** Names being written and not yet committed to (or dropped from) the database. */
  readonly #inFlight = new Set<string>();

  constructor(readonly dir: string) {}

  /** Create the directory (0700), or tighten an existing one to 0700. */
  async init(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const st = await stat(this.dir);
    if ((st.mode & 0o777) !== 0o700) await chmod(this.dir, 0o700);
  }

  /** A fresh file name for `id`; it counts as in flight until `settle` is called. */
  reserve(id: string, kind: KeyFileKind): string {
    const name = `${id}-${randomBytes(4).toString('hex')}.${kind}`;
    this.#inFlight.add(name);
    return name;
  }

  /** The write is committed to the database, or abandoned: the sweep may judge the name again. */
  settle(name: string): void {
    this.#inFlight.delete(name);
  }

  /** Write a new secret file durably (0600, exclusive create, fsync of file and directory). */
  async write(name: string, data: string): Promise<void> {
    const fh = await open(join(this.dir, name), 'wx', 0o600);
    try {
      await fh.writeFile(data, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    await syncDir(this.dir);
  }

  async read(name: string): Promise<string> {
    return readFile(join(this.dir, name), 'utf8');
  }

  /** Remove a file; a missing file is not an error (the sweep or a racing request got it). */
  async remove(name: string | null | undefined): Promise<void> {
    if (name === null || name === undefined) return;
    await unlink(join(this.dir, name)).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== 'ENOENT') throw e;
    });
  }

  /**
   * Remove files no database row refers to. `referenced` is asked only after the
   * directory has been listed, so a file committed in between is seen as referenced;
   * files still being written are in flight and skipped. Returns the number removed.
   */
  async removeOrphans(referenced: () => ReadonlySet<string>): Promise<number> {
    const names = (await readdir(this.dir)).filter((n) => NAME.test(n));
    const live = referenced();
    const dead = names.filter((n) => !live.has(n) && !this.#inFlight.has(n));
    for (const n of dead) await this.remove(n);
    return dead.length;
  }
}
