/**
 * Session files as the web pages use them, through the same confined access as the REST
 * session resource (SessionDirs lease + SessionFiles: no link followed, paths checked).
 * Downloads are always attachments with a neutral media type.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { ceError } from '../../errors/ce-error.js';
import type { SessionDirs } from '../../sessions/session-dirs.js';
import type { SessionFiles } from '../../sessions/session-files.js';
import { readDirTable } from '../../sessions/dir-table.js';
import { parseSessionPath, type SessionPath } from '../../sessions/session-path.js';
import type { JobRecord } from '../../store/job-record.js';
import { sendFileHandle } from '../rest/send-file.js';
import type { FileEntry } from './pages.js';

const MAX_LISTED = 2000;

/** A decoded relative path (`a/b`) as the session path parser wants it (encoded segments). */
function pathOf(rel: string, encoded = false): SessionPath {
  const segs = rel === '' ? [] : rel.split('/');
  return parseSessionPath(encoded ? segs : segs.map(encodeURIComponent));
}

export class WebSessionFiles {
  constructor(
    readonly sessions: Pick<SessionDirs, 'withRoot'>,
    readonly files: SessionFiles,
  ) {}

  async list(j: JobRecord, dir: string): Promise<FileEntry[]> {
    const p = pathOf(dir);
    return this.sessions.withRoot(j.id, j.sessionIdent, async (root) => {
      const opened = await this.files.open(root, p);
      if (opened.kind === 'file') {
        await opened.handle.close();
        throw ceError('CE_ERR_SESSION_NOT_FOUND', 'not a directory');
      }
      try {
        const t = await readDirTable(opened.handle, { maxEntries: MAX_LISTED, gone: () => false });
        return t.names.map((name, i) => ({ name, dir: i >= t.fileCount, size: t.sizes[i] ?? 0 }));
      } finally {
        await opened.handle.close();
      }
    });
  }

  async remove(j: JobRecord, rel: string): Promise<void> {
    const p = pathOf(rel);
    if (p.segments.length === 0) throw ceError('CE_ERR_HTTP_BAD_REQUEST', 'no file named');
    await this.sessions.withRoot(j.id, j.sessionIdent, (root) => this.files.remove(j.id, root, p));
  }

  async put(j: JobRecord, rel: string, body: IncomingMessage, contentLength: number): Promise<void> {
    const p = pathOf(rel);
    if (p.segments.length === 0 || p.trailingSlash) throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
    await this.#write(j, p, body, contentLength);
  }

  /**
   * Writes `body` as the file `name` in the folder `dir` (the script-free upload form).
   * The name is one segment: a '/' in it, `..` and the REST path rules' other refusals
   * are a 400 (a browser sends a bare file name; anything else is forged).
   */
  async putIn(j: JobRecord, dir: string, name: string, body: Readable): Promise<void> {
    const segs = dir === '' ? [] : dir.split('/');
    const p = parseSessionPath([...segs, name].map(encodeURIComponent));
    await this.#write(j, p, body, undefined);
  }

  /** One whole-file write through the REST writer (temporary file, then rename; no links followed). */
  async #write(j: JobRecord, p: SessionPath, body: Readable, contentLength: number | undefined): Promise<void> {
    await this.sessions.withRoot(j.id, j.sessionIdent, (root) =>
      this.files.put({
        jobId: j.id,
        sessionDir: root,
        path: p,
        body,
        contentLength,
        range: undefined,
        ifNoneMatchAny: false,
      }),
    );
  }

  async download(j: JobRecord, relEncoded: string, raw: IncomingMessage, reply: FastifyReply): Promise<FastifyReply> {
    const p = pathOf(relEncoded, true);
    const name = p.segments[p.segments.length - 1] ?? 'file';
    const opened = await this.sessions.withRoot(j.id, j.sessionIdent, (root) => this.files.open(root, p));
    if (opened.kind !== 'file') {
      await opened.handle.close();
      throw ceError('CE_ERR_SESSION_IS_DIRECTORY');
    }
    const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
    void reply.header(
      'content-disposition',
      `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`,
    );
    return sendFileHandle(raw, reply, opened.handle, opened.stat.size, {
      contentType: 'application/octet-stream',
      lastModified: opened.stat.mtime,
    });
  }
}
