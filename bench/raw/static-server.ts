/**
 * The raw loopback baseline for file transfers: the least an HTTPS file server in
 * Node can do. `PUT /file` streams the body to a file, `GET /file` streams it back,
 * both with 1 MiB stream chunks (the 64 KiB default halves throughput:
 * measured on the development machine). No authentication, no checks, no logging.
 *
 * With `--answer FILE`, a POST to any path is answered 200 with FILE's bytes as
 * application/json once its body has been read: the least a server can do for a
 * request like `action=status`, which reads an id list and writes a document
 * (bench/request-cpu.ts, `--floor`).
 *
 * Run as its own process (like the service under test):
 *   node static-server.js --cert F --key F --dir D [--answer FILE]
 * prints "listening <port>" on stdout when ready; stops on SIGTERM.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { createServer } from 'node:https';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';

const CHUNK = 1024 * 1024;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      cert: { type: 'string' },
      key: { type: 'string' },
      dir: { type: 'string' },
      answer: { type: 'string' },
    },
    strict: true,
  });
  if (!values.cert || !values.key || !values.dir) throw new Error('usage: static-server --cert F --key F --dir D');
  const file = join(values.dir, 'file.bin');
  const answer = values.answer === undefined ? undefined : await readFile(values.answer);
  const server = createServer({ cert: await readFile(values.cert), key: await readFile(values.key) }, (req, res) => {
    const fail = (e: unknown): void => {
      if (!res.headersSent) res.writeHead(500).end(String((e as Error)?.message ?? e));
      else res.destroy();
    };
    if (answer !== undefined && req.method === 'POST') {
      req.resume();
      req.once('end', () =>
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer),
      );
      return;
    }
    if (req.url !== '/file') {
      res.writeHead(404).end();
      return;
    }
    if (req.method === 'PUT') {
      pipeline(req, createWriteStream(file, { highWaterMark: CHUNK })).then(() => res.writeHead(200).end(), fail);
    } else if (req.method === 'GET') {
      stat(file)
        .then((st) => {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': st.size });
          return pipeline(createReadStream(file, { highWaterMark: CHUNK }), res);
        }, fail)
        .catch(fail);
    } else if (req.method === 'DELETE') {
      unlink(file).then(() => res.writeHead(204).end(), fail);
    } else {
      res.writeHead(405).end();
    }
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(`listening ${typeof a === 'object' && a ? a.port : 0}\n`);
  });
  process.on('SIGTERM', () => server.close(() => process.exit(0)));
}

main().catch((e: unknown) => {
  process.stderr.write(`static-server: ${(e as Error)?.message ?? String(e)}\n`);
  process.exitCode = 1;
});
