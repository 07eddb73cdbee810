// readBody on real sockets: a second read of a body already read answers at once, a
// request whose client is gone is a client abort (400), never an unexpected error.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { readBody } from '../../src/http/body.js';
import { isCeError } from '../../src/errors/ce-error.js';
import { until } from '../helpers/poll.js';

describe('readBody', () => {
  let server: Server;
  let port: number;
  let onRequest: (req: IncomingMessage) => Promise<string>;
  before(async () => {
    server = createServer((req, res) => {
      void onRequest(req).then(
        (text) => res.end(text),
        (e) => res.end(`error ${isCeError(e) ? `${e.statusCode} ${e.code}` : String(e)}`),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const post = (body: string) =>
    new Promise<string>((resolve, reject) => {
      const req = request(
        { port, host: '127.0.0.1', method: 'POST', headers: { 'content-length': body.length } },
        (res) => {
          let t = '';
          res.on('data', (c: Buffer) => (t += c.toString()));
          res.on('end', () => resolve(t));
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  it('reads the body; a second read of the same request answers empty at once', async () => {
    onRequest = async (req) => {
      const first = await readBody(req, 100);
      const second = await Promise.race([
        readBody(req, 100),
        new Promise<Buffer>((_, rej) => setTimeout(() => rej(new Error('second read hangs')), 2000)),
      ]);
      return `${first.toString()}|${second.length}`;
    };
    assert.equal(await post('hello'), 'hello|0');
  });

  it('a client gone mid-body, or before the read starts, is CE_ERR_HTTP_CLIENT_ABORTED', async () => {
    const outcomes: string[] = [];
    onRequest = async (req) => {
      try {
        if (req.headers['x-late'] !== undefined) await until(() => req.destroyed, 'the request to be gone');
        await readBody(req, 1000);
        outcomes.push('read');
      } catch (e) {
        outcomes.push(isCeError(e) ? e.code : `unexpected ${String(e)}`);
      }
      return '';
    };
    for (const late of [false, true]) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      await new Promise((r) => s.once('connect', r));
      s.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n${late ? 'x-late: 1\r\n' : ''}\r\nabc`);
      await new Promise((r) => setTimeout(r, 100));
      s.destroy();
    }
    await until(() => outcomes.length === 2, 'both reads to end');
    assert.deepEqual(outcomes, ['CE_ERR_HTTP_CLIENT_ABORTED', 'CE_ERR_HTTP_CLIENT_ABORTED']);
  });
});
