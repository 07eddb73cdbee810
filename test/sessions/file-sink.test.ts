import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { fileSink } from '../../src/sessions/file-sink.js';
import { spareBatches } from '../../src/sessions/spare-batches.js';
import { until } from '../helpers/poll.js';

/** A real file handle whose writes are held until `release()`, counting those in flight. */
function gated(fh: FileHandle) {
  let inFlight = 0;
  let maxInFlight = 0;
  let started = 0;
  const sizes: number[] = [];
  let held: (() => void)[] = [];
  let holding = true;
  const hold = (): Promise<void> => (holding ? new Promise((r) => held.push(r)) : Promise.resolve());
  const proxy = {
    async writev(bufs: Buffer[], pos: number) {
      started++;
      sizes.push(bufs.reduce((n, b) => n + b.length, 0));
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await hold();
        return await fh.writev(bufs, pos);
      } finally {
        inFlight--;
      }
    },
    write: fh.write.bind(fh),
  } as unknown as FileHandle;
  return {
    fh: proxy,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get started() {
      return started;
    },
    sizes,
    release(all = false) {
      if (all) holding = false;
      const h = held;
      held = [];
      for (const r of h) r();
    },
  };
}

/** `data` cut at random boundaries (1 byte to 40 KiB). */
function* randomPieces(data: Buffer): Generator<Buffer> {
  let at = 0;
  while (at < data.length) {
    const n = Math.min(data.length - at, 1 + Math.floor(Math.random() * 40 * 1024));
    yield data.subarray(at, at + n);
    at += n;
  }
}

describe('file sink (writes in flight)', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ceres-sink-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps the content intact at random chunk boundaries, from an offset', async () => {
    for (let round = 0; round < 5; round++) {
      const path = join(dir, `intact-${round}`);
      const data = randomBytes(3 * 1024 * 1024 + Math.floor(Math.random() * 100_000));
      const start = Math.floor(Math.random() * 5000);
      const fh = await open(path, 'w+');
      try {
        await pipeline(Readable.from(randomPieces(data)), fileSink(fh, { start, chunkBytes: 64 * 1024, maxWrites: 3 }));
      } finally {
        await fh.close();
      }
      const got = await readFile(path);
      assert.equal(got.length, start + data.length);
      assert.ok(got.subarray(0, start).every((b) => b === 0));
      assert.ok(got.subarray(start).equals(data), `round ${round}: content differs`);
    }
  });

  it('has several writes in flight but never more bytes than the bound (backpressure)', async () => {
    const fh = await open(join(dir, 'bounded'), 'w+');
    const g = gated(fh);
    try {
      const sink = fileSink(g.fh, { start: 0, chunkBytes: 16 * 1024, maxWrites: 2 });
      const data = randomBytes(1024 * 1024);
      const src = Readable.from(randomPieces(data));
      const done = pipeline(src, sink);
      // With every write held, the stream stops taking data once two writes are in flight.
      await until(() => g.inFlight >= 2, 'two writes in flight');
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(g.inFlight, 2, 'two writes in flight, no more');
      assert.equal(g.started, 2, 'the chunks that arrived meanwhile wait to go out together');
      assert.ok(sink.writableLength > 0);
      assert.ok(sink.writableLength <= 16 * 1024 + 40 * 1024, `buffered ${sink.writableLength}`);
      g.release(true);
      await done;
      assert.equal(g.maxInFlight, 2);
      assert.ok((await readFile(join(dir, 'bounded'))).equals(data));
    } finally {
      await fh.close();
    }
  });

  it('pieces smaller than a batch go out in batches, not one write each', async () => {
    const fh = await open(join(dir, 'batched'), 'w+');
    const g = gated(fh);
    try {
      const data = randomBytes(1024 * 1024);
      const pieces = Array.from({ length: 1024 }, (_, i) => data.subarray(i * 1024, (i + 1) * 1024));
      const done = pipeline(Readable.from(pieces), fileSink(g.fh, { start: 0, chunkBytes: 16 * 1024, maxWrites: 2 }));
      // The idle writer takes the first piece at once; a second write waits for a full batch.
      await until(() => g.inFlight === 2, 'two writes in flight');
      assert.equal(g.sizes[0], 1024);
      assert.ok((g.sizes[1] ?? 0) >= 16 * 1024, `second write of ${g.sizes[1]} bytes`);
      g.release(true);
      await done;
      assert.ok(g.started <= 2 * 64 + 2, `${g.started} writes for 1,024 pieces of 1 KiB`);
      assert.ok((await readFile(join(dir, 'batched'))).equals(data));
    } finally {
      await fh.close();
    }
  });

  it('a refusal by accept() writes nothing of the refused batch and fails the stream', async () => {
    const fh = await open(join(dir, 'refused'), 'w+');
    try {
      const sink = fileSink(fh, {
        start: 0,
        chunkBytes: 1024,
        maxWrites: 2,
        accept: (total) => {
          if (total > 10_000) throw new Error('over the quota');
        },
      });
      const pieces = Array.from({ length: 30 }, () => Buffer.alloc(1000, 7));
      await assert.rejects(pipeline(Readable.from(pieces), sink), /over the quota/);
      assert.ok((await fh.stat()).size <= 10_000);
    } finally {
      await fh.close();
    }
  });

  it('destroyed with writes in flight: closes only after they ended, never closes the handle', async () => {
    const fh = await open(join(dir, 'aborted'), 'w+');
    const g = gated(fh);
    try {
      const sink = fileSink(g.fh, { start: 0, chunkBytes: 1024, maxWrites: 4 });
      for (let i = 0; i < 20; i++) sink.write(Buffer.alloc(1024, i));
      await until(() => g.inFlight >= 2, 'writes in flight');
      let closed = false;
      sink.once('close', () => (closed = true));
      sink.destroy(new Error('client went away'));
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(closed, false, 'closed while writes were still in flight');
      g.release(true);
      await assert.rejects(finished(sink), /client went away/);
      assert.equal(g.inFlight, 0);
      assert.ok(closed);
      // The handle is still open (its owner closes it, once).
      assert.ok((await fh.stat()).isFile());
    } finally {
      await fh.close();
    }
  });

  it('a failing write fails the stream at once, and a second close of the handle is never attempted', async () => {
    const fh = await open(join(dir, 'failing'), 'w+');
    let calls = 0;
    const failing = {
      async writev(bufs: Buffer[], pos: number) {
        if (++calls === 2) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
        return fh.writev(bufs, pos);
      },
      write: fh.write.bind(fh),
      close: () => assert.fail('the sink closed the handle'),
    } as unknown as FileHandle;
    try {
      const sink = fileSink(failing, { start: 0, chunkBytes: 1024, maxWrites: 2 });
      sink.write(Buffer.alloc(1024));
      sink.write(Buffer.alloc(1024));
      sink.write(Buffer.alloc(1024));
      await assert.rejects(finished(sink), (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
    } finally {
      await fh.close();
    }
  });
  describe('spare batches (extra copied buffering while writes are slow)', () => {
    const KB16 = 16 * 1024;
    /** A sink over a held file, fed 1 MiB of random pieces; `accepted` counts the bytes it took. */
    async function heldSink(name: string, spare: ReturnType<typeof spareBatches> | undefined) {
      const fh = await open(join(dir, name), 'w+');
      const g = gated(fh);
      let accepted = 0;
      const sink = fileSink(g.fh, {
        start: 0,
        chunkBytes: KB16,
        maxWrites: 2,
        ...(spare ? { spare } : {}),
        accept: (t) => void (accepted = t),
      });
      const data = randomBytes(1024 * 1024);
      const done = pipeline(Readable.from(randomPieces(data)), sink);
      done.catch(() => undefined);
      await until(() => g.inFlight >= 2, 'two writes in flight');
      await new Promise((r) => setTimeout(r, 50));
      const inWrites = g.sizes.reduce((a, b) => a + b, 0);
      return { fh, g, sink, data, done, waitingCopied: () => accepted - inWrites };
    }

    it('lets up to maxBatches more batches wait, copied, and gives them all back at the end', async () => {
      const spare = spareBatches(10, 3);
      const t = await heldSink('spare', spare);
      try {
        assert.equal(t.g.inFlight, 2);
        assert.equal(spare.lent, 3, 'three batches borrowed while the writes are held');
        assert.ok(t.waitingCopied() >= 4 * KB16, `${t.waitingCopied()} bytes copied and waiting`);
        assert.ok(t.sink.writableLength <= KB16 + 40 * 1024, `stream buffer ${t.sink.writableLength}`);
        t.g.release(true);
        await t.done;
        assert.equal(spare.lent, 0, 'everything borrowed given back');
        assert.ok((await readFile(join(dir, 'spare'))).equals(t.data));
      } finally {
        await t.fh.close();
      }
    });

    it('a spent allowance lends nothing: the sink waits after one batch, as without one', async () => {
      const spare = spareBatches(0, 3);
      const t = await heldSink('spent', spare);
      try {
        assert.equal(spare.lent, 0);
        assert.ok(t.waitingCopied() < KB16 + 40 * 1024, `${t.waitingCopied()} bytes copied and waiting`);
        t.g.release(true);
        await t.done;
        assert.ok((await readFile(join(dir, 'spent'))).equals(t.data));
      } finally {
        await t.fh.close();
      }
    });

    it('two sinks share the allowance: neither borrows more than what is left', async () => {
      const spare = spareBatches(4, 3);
      const a = await heldSink('share-a', spare);
      const b = await heldSink('share-b', spare);
      try {
        assert.equal(spare.lent, 4);
        assert.ok(b.waitingCopied() < 2 * KB16 + 40 * 1024, `second sink has ${b.waitingCopied()} bytes waiting`);
        a.g.release(true);
        b.g.release(true);
        await Promise.all([a.done, b.done]);
        assert.equal(spare.lent, 0);
      } finally {
        await a.fh.close();
        await b.fh.close();
      }
    });

    it('destroyed with batches borrowed and writes in flight: gives every batch back', async () => {
      const spare = spareBatches(10, 3);
      const t = await heldSink('spare-destroyed', spare);
      try {
        assert.equal(spare.lent, 3);
        t.sink.destroy(new Error('client went away'));
        assert.equal(spare.lent, 0, 'given back at once: the waiting bytes are dropped');
        t.g.release(true);
        await assert.rejects(t.done, /client went away/);
        assert.equal(spare.lent, 0);
      } finally {
        await t.fh.close();
      }
    });

    it('a failing write gives every borrowed batch back', async () => {
      const spare = spareBatches(10, 3);
      const fh = await open(join(dir, 'spare-failing'), 'w+');
      let calls = 0;
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      const failing = {
        async writev(bufs: Buffer[], pos: number) {
          calls++;
          await held;
          if (calls >= 2) throw Object.assign(new Error('disk full'), { code: 'ENOSPC' });
          return fh.writev(bufs, pos);
        },
        write: fh.write.bind(fh),
      } as unknown as FileHandle;
      try {
        const sink = fileSink(failing, { start: 0, chunkBytes: KB16, maxWrites: 2, spare });
        const done = pipeline(Readable.from(randomPieces(randomBytes(1024 * 1024))), sink);
        done.catch(() => undefined);
        await until(() => spare.lent === 3, 'three batches borrowed');
        release();
        await assert.rejects(done, (e: NodeJS.ErrnoException) => e.code === 'ENOSPC');
        assert.equal(spare.lent, 0);
      } finally {
        await fh.close();
      }
    });
  });
});
