/**
 * A small streaming reader of `multipart/form-data` bodies (RFC 7578, boundary syntax of
 * RFC 2046 §5.1.1), for the upload form that works without script. Only what a browser's
 * form sends is accepted, within hard bounds, so a hostile body cannot make the service
 * buffer or loop: at most `maxParts` parts, each part's header block at most
 * `maxHeaderBytes`, a text field at most `maxFieldBytes`, the whole body at most
 * `maxBodyBytes` (also when chunked). A file part's content is never buffered: it is
 * handed on as a stream, backpressure reaching the socket.
 *
 * The request is read with pause/resume, never destroyed, so a refusal still reaches the
 * client; `drop()` reads and discards the rest.
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { ceError, type CeError } from '../../errors/ce-error.js';
import { clientAborted, onBodyTooSlow } from '../../http/body.js';

export interface MultipartLimits {
  readonly maxParts: number;
  readonly maxHeaderBytes: number;
  readonly maxFieldBytes: number;
  readonly maxBodyBytes: number;
}

export interface PartHead {
  /** The form field's name. */
  readonly name: string;
  /** The file name a browser gave (a file input's part), else undefined. */
  readonly filename: string | undefined;
}

const invalid = (why: string): CeError => ceError('CE_ERR_WEB_FORM_INVALID', `The upload form is malformed: ${why}`);

/** The boundary of a `multipart/form-data` Content-Type (RFC 2046: 1 to 70 characters). */
export function boundaryOf(contentType: string | undefined): string {
  const ct = contentType ?? '';
  if (!/^multipart\/form-data\s*;/i.test(ct)) throw invalid('expected multipart/form-data');
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))\s*(?:;|$)/i.exec(ct);
  const b = m?.[1] ?? m?.[2];
  if (b === undefined || !/^[0-9A-Za-z'()+_,\-./:=? ]*[0-9A-Za-z'()+_,\-./:=?]$/.test(b))
    throw invalid('no valid boundary');
  return b;
}

/** The request's chunks, one at a time, pausing the socket between reads. */
class Chunks {
  readonly #q: Buffer[] = [];
  #ended = false;
  #err: Error | undefined;
  #dropping = false;
  #wake: (() => void) | undefined;
  #total = 0;
  readonly #unwatch: () => void;

  constructor(
    readonly req: IncomingMessage,
    readonly maxBytes: number,
  ) {
    const wake = () => this.#wakeUp();
    req.on('data', (c: Buffer) => {
      if (this.#dropping) return;
      this.#total += c.length;
      if (this.#total > maxBytes) this.#err ??= tooLarge(maxBytes);
      else this.#q.push(c);
      req.pause();
      wake();
    });
    req.on('end', () => {
      this.#ended = true;
      wake();
    });
    req.on('error', (e) => {
      this.#err ??= clientAborted(e);
      wake();
    });
    req.on('close', () => {
      if (!req.complete) this.#err ??= clientAborted(undefined);
      wake();
    });
    // The body-rate floor (src/http/body-rate.ts) stops a read that is too slow.
    this.#unwatch = onBodyTooSlow(req, (e) => {
      this.#err ??= e;
      wake();
    });
  }

  async next(): Promise<Buffer | undefined> {
    for (;;) {
      // Dropped: a part's stream still being pulled (a refused upload drains it) ends here.
      if (this.#dropping) return undefined;
      const c = this.#q.shift();
      if (c !== undefined) return c;
      if (this.#err !== undefined) throw this.#err;
      if (this.#ended) return undefined;
      const woken = new Promise<void>((r) => (this.#wake = r));
      this.req.resume();
      await woken;
    }
  }

  #wakeUp(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /** Reads and discards the rest (not after a body-rate stop or a disconnect: that connection closes). */
  drop(): void {
    this.#unwatch();
    this.#dropping = true;
    this.#q.length = 0;
    this.#wakeUp();
    const code = (this.#err as CeError | undefined)?.code;
    if (code !== 'CE_ERR_HTTP_BODY_TOO_SLOW' && code !== 'CE_ERR_HTTP_CLIENT_ABORTED') this.req.resume();
  }
}

function tooLarge(max: number): CeError {
  return ceError('CE_ERR_WEB_UPLOAD_TOO_LARGE', `The upload is larger than the web upload limit of ${max} bytes`);
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

export class MultipartReader {
  readonly #src: Chunks;
  readonly #delim: Buffer;
  readonly #limits: MultipartLimits;
  // The body is read as if preceded by CRLF, so the first boundary line matches the
  // delimiter `CRLF--boundary` like every later one (RFC 2046's delimiter includes the CRLF).
  #buf: Buffer = CRLF;
  #parts = 0;
  /** 'preamble': before the first delimiter; 'body': inside a part's content; 'done': after the close delimiter. */
  #at: 'preamble' | 'head' | 'body' | 'done' = 'preamble';

  constructor(req: IncomingMessage, boundary: string, limits: MultipartLimits) {
    this.#src = new Chunks(req, limits.maxBodyBytes);
    this.#delim = Buffer.from(`\r\n--${boundary}`);
    this.#limits = limits;
  }

  async #more(): Promise<void> {
    const c = await this.#src.next();
    if (c === undefined) throw invalid('the body ends before the closing boundary');
    this.#buf = this.#buf.length === 0 ? c : Buffer.concat([this.#buf, c]);
  }

  /** The next part's head, or undefined after the last part. The previous part's content must have been read. */
  async next(): Promise<PartHead | undefined> {
    if (this.#at === 'done') return undefined;
    if (this.#at === 'body') throw new Error('multipart: the previous part was not read');
    if (this.#at === 'preamble') {
      // Skip the preamble (browsers send none), keeping it bounded.
      for (;;) {
        const i = this.#buf.indexOf(this.#delim);
        if (i >= 0) {
          this.#buf = this.#buf.subarray(i + this.#delim.length);
          break;
        }
        if (this.#buf.length > this.#limits.maxHeaderBytes) throw invalid('no boundary where the body starts');
        await this.#more();
      }
      this.#at = 'head';
    }
    // After a delimiter: `--` closes the body; else transport padding, CRLF, the headers.
    while (this.#buf.length < 2) await this.#more();
    if (this.#buf[0] === 0x2d && this.#buf[1] === 0x2d) {
      this.#at = 'done';
      return undefined;
    }
    if (++this.#parts > this.#limits.maxParts)
      throw ceError('CE_ERR_WEB_FORM_TOO_LARGE', `The upload form has more than ${this.#limits.maxParts} parts`);
    let end: number;
    while ((end = this.#buf.indexOf(HEADER_END)) < 0) {
      if (this.#buf.length > this.#limits.maxHeaderBytes)
        throw ceError('CE_ERR_WEB_FORM_TOO_LARGE', 'A part of the upload form has too large a header');
      await this.#more();
    }
    if (end > this.#limits.maxHeaderBytes)
      throw ceError('CE_ERR_WEB_FORM_TOO_LARGE', 'A part of the upload form has too large a header');
    const head = this.#buf.subarray(0, end).toString('utf8');
    this.#buf = this.#buf.subarray(end + HEADER_END.length);
    this.#at = 'body';
    return parseHead(head);
  }

  /** The current part's content, chunk by chunk, up to the next delimiter. */
  async *#content(): AsyncGenerator<Buffer> {
    const keep = this.#delim.length - 1;
    for (;;) {
      const i = this.#buf.indexOf(this.#delim);
      if (i >= 0) {
        if (i > 0) yield this.#buf.subarray(0, i);
        this.#buf = this.#buf.subarray(i + this.#delim.length);
        this.#at = 'head';
        return;
      }
      // All but a possible start of the delimiter can go.
      if (this.#buf.length > keep) {
        const out = this.#buf.subarray(0, this.#buf.length - keep);
        this.#buf = this.#buf.subarray(this.#buf.length - keep);
        yield out;
      }
      await this.#more();
    }
  }

  /**
   * The current part as text: at most `maxFieldBytes`, or `max` for a field allowed to be
   * longer (a pasted job description), past which `tooLong` is thrown.
   */
  async text(max = this.#limits.maxFieldBytes, tooLong?: () => CeError): Promise<string> {
    const chunks: Buffer[] = [];
    let n = 0;
    for await (const c of this.#content()) {
      n += c.length;
      if (n > max)
        throw (
          tooLong?.() ?? ceError('CE_ERR_WEB_FORM_TOO_LARGE', `A field of the upload form is longer than ${max} bytes`)
        );
      chunks.push(c);
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /**
   * The current part's content as a stream (a file). Its errors reach whoever reads it;
   * once nobody does (a refused upload stops reading), they are dropped here.
   */
  stream(): Readable {
    const r = Readable.from(this.#content(), { objectMode: false });
    r.on('error', () => undefined);
    return r;
  }

  /** Done with the request: the rest is read and dropped (the answer can then be read). */
  drop(): void {
    this.#src.drop();
  }
}

/** The field name and file name of a part's `Content-Disposition: form-data` header. */
function parseHead(head: string): PartHead {
  let disposition: string | undefined;
  for (const line of head.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && line.slice(0, i).trim().toLowerCase() === 'content-disposition') disposition = line.slice(i + 1);
  }
  if (disposition === undefined || !/^\s*form-data\s*(;|$)/i.test(disposition))
    throw invalid('a part without Content-Disposition: form-data');
  const params = new Map<string, string>();
  // Quoted values are taken literally: the HTML form encoding escapes `"`, CR and LF
  // as %22, %0D, %0A and leaves a backslash as it is (then refused by the path rules).
  const re = /;\s*([A-Za-z0-9*_-]+)\s*=\s*(?:"([^"]*)"|([^;\s]*))/g;
  for (let m; (m = re.exec(disposition)) !== null;) {
    const key = (m[1] as string).toLowerCase();
    if (!params.has(key)) params.set(key, m[2] ?? (m[3] as string));
  }
  const name = params.get('name');
  if (name === undefined) throw invalid('a part without a field name');
  return { name, filename: params.get('filename') };
}
