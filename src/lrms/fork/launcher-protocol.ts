/**
 * The launcher's wire protocol, shared by the service's side (./launcher-client.ts) and the
 * Node launcher (./launcher.ts); the C launcher (./launcher-c.ts) speaks the same. Binary
 * frames, integers little-endian, so any byte but NUL passes through unchanged:
 *   request:  u32 n, then n bytes: u32 id, u32 argc, u32 envc, then argc + envc + 1 strings,
 *             each ended by a NUL: the file, its arguments (argv[0] is the file), the
 *             environment entries "NAME=value" (exactly that environment)
 *   answer:   u32 n, then n bytes: u8 op, u32 a, i32 b, text (n - 9 bytes)
 *     'S' started: a = request id, b = pid, text = the wrapper's first line (at most
 *                  LINE_MAX bytes, without its newline; trimmed output if it had none)
 *     'E' error:   a = request id, b = errno (0 if unknown), text = the reason
 *     'X' exit:    a = pid, b = 1 if its first line began "ok " (it ran a job), else 0
 * Imports nothing: the Node launcher runs it as part of a separate program.
 */

/** Longest first line a launcher reads from a wrapper; the rest is dropped. */
export const LINE_MAX = 4096;
/** Largest request a launcher accepts (a larger length means a broken stream). */
export const MAX_REQUEST = 64 * 1024 * 1024;

export type Answer =
  | { readonly op: 'started'; readonly id: number; readonly pid: number; readonly line: string }
  | { readonly op: 'error'; readonly id: number; readonly errno: number; readonly message: string }
  | { readonly op: 'exit'; readonly pid: number; readonly claimed: boolean };

export interface Request {
  readonly id: number;
  readonly file: string;
  readonly args: string[];
  /** "NAME=value" entries. */
  readonly env: string[];
}

/**
 * The frame of a spawn request. Throws (a plain Error saying which) on what the protocol
 * cannot carry: a NUL anywhere, an environment name that is empty or holds '='.
 */
export function encodeRequest(
  id: number,
  file: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Buffer {
  const strings: string[] = [file, ...args];
  for (const [k, v] of Object.entries(env)) {
    if (k === '' || k.includes('=')) throw new Error(`environment name ${JSON.stringify(k)} cannot be passed`);
    strings.push(`${k}=${v}`);
  }
  let size = 16;
  for (const s of strings) {
    if (s.includes('\0')) throw new Error('an argument or environment entry holds a NUL byte');
    size += Buffer.byteLength(s) + 1;
  }
  if (size - 4 > MAX_REQUEST) throw new Error(`the request is larger than ${MAX_REQUEST} bytes`);
  const buf = Buffer.allocUnsafe(size);
  buf.writeUInt32LE(size - 4, 0);
  buf.writeUInt32LE(id >>> 0, 4);
  buf.writeUInt32LE(args.length, 8);
  buf.writeUInt32LE(strings.length - 1 - args.length, 12);
  let off = 16;
  for (const s of strings) {
    off += buf.write(s, off);
    buf[off++] = 0;
  }
  return buf;
}

/** The request in a frame (the n bytes after the length), or undefined if it is malformed. */
export function decodeRequest(frame: Buffer): Request | undefined {
  if (frame.length < 12) return undefined;
  const id = frame.readUInt32LE(0);
  const argc = frame.readUInt32LE(4);
  const envc = frame.readUInt32LE(8);
  if (argc > frame.length || envc > frame.length) return undefined;
  const strings: string[] = [];
  let off = 12;
  for (let i = 0; i < argc + envc + 1; i++) {
    const z = frame.indexOf(0, off);
    if (z < 0) return undefined;
    strings.push(frame.toString('utf8', off, z));
    off = z + 1;
  }
  return { id, file: strings[0] ?? '', args: strings.slice(1, argc + 1), env: strings.slice(argc + 1) };
}

const OPS = { started: 0x53, error: 0x45, exit: 0x58 } as const;

/** The frame of an answer. */
export function encodeAnswer(op: keyof typeof OPS, a: number, b: number, text: Buffer | string = ''): Buffer {
  const t = typeof text === 'string' ? Buffer.from(text) : text;
  const buf = Buffer.allocUnsafe(13 + t.length);
  buf.writeUInt32LE(9 + t.length, 0);
  buf[4] = OPS[op];
  buf.writeUInt32LE(a >>> 0, 5);
  buf.writeInt32LE(b | 0, 9);
  t.copy(buf, 13);
  return buf;
}

/** The answer in a frame, or undefined if it is none. */
export function decodeAnswer(frame: Buffer): Answer | undefined {
  if (frame.length < 9) return undefined;
  const a = frame.readUInt32LE(1);
  const b = frame.readInt32LE(5);
  switch (frame[0]) {
    case OPS.started:
      return { op: 'started', id: a, pid: b, line: frame.toString('utf8', 9) };
    case OPS.error:
      return { op: 'error', id: a, errno: b, message: frame.toString('utf8', 9) };
    case OPS.exit:
      return { op: 'exit', pid: a, claimed: b === 1 };
    default:
      return undefined;
  }
}

/** Cuts a byte stream into frames (the n bytes after each length). */
export class FrameReader {
  #buf: Buffer = Buffer.alloc(0);
  readonly #max: number;

  constructor(max = MAX_REQUEST) {
    this.#max = max;
  }

  /** The frames completed by `chunk`; throws on a length over the bound (the stream is broken). */
  push(chunk: Buffer): Buffer[] {
    const buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    const frames: Buffer[] = [];
    let off = 0;
    while (buf.length - off >= 4) {
      const n = buf.readUInt32LE(off);
      if (n > this.#max) throw new Error(`frame of ${n} bytes`);
      if (buf.length - off - 4 < n) break;
      frames.push(buf.subarray(off + 4, off + 4 + n));
      off += 4 + n;
    }
    // Frames are views of `buf`: a copy keeps the rest from holding on to it.
    this.#buf = off === buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(off));
    return frames;
  }
}
