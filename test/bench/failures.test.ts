import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BenchError,
  classifyTransportError,
  errorChain,
  refusalFor,
  shortReason,
} from '../../bench/harness/failures.js';

const err = (code: string, message = code, extra: object = {}) => Object.assign(new Error(message), { code, ...extra });

test('the code is found in causes and aggregated errors', () => {
  const e = err('UND_ERR_SOCKET', 'other side closed', { cause: new AggregateError([err('ECONNREFUSED')]) });
  assert.deepEqual(errorChain(e).codes, ['UND_ERR_SOCKET', 'ECONNREFUSED']);
  const c = classifyTransportError(e, 'https://h:1');
  assert.equal(c.kind, 'unreachable');
});

test('a cycle of causes terminates', () => {
  const a = err('A');
  const b = err('B', 'b', { cause: a });
  (a as Error & { cause?: unknown }).cause = b;
  assert.deepEqual(errorChain(a).codes, ['A', 'B']);
});

test('each family of failure maps to its kind', () => {
  const k = (e: unknown) => classifyTransportError(e, 'https://h:1').kind;
  assert.equal(k(err('ENOTFOUND')), 'unreachable');
  assert.equal(k(err('UND_ERR_CONNECT_TIMEOUT')), 'unreachable');
  assert.equal(k(err('UNABLE_TO_VERIFY_LEAF_SIGNATURE')), 'tls-trust');
  assert.equal(k(err('ERR_TLS_CERT_ALTNAME_INVALID')), 'tls-trust');
  assert.equal(k(err('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED')), 'credentials');
  assert.equal(k(err('ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE')), 'credentials');
  assert.equal(k(err('ERR_SSL_WRONG_VERSION_NUMBER')), 'not-arc');
  assert.equal(k(err('ECONNRESET')), 'closed');
  assert.equal(k(err('UND_ERR_SOCKET', 'other side closed')), 'closed');
  assert.match(
    classifyTransportError(err('UND_ERR_SOCKET', 'other side closed'), 'https://h:1').message,
    /https:\/\/h:1 closed the connection without an answer \(UND_ERR_SOCKET: other side closed\)/,
  );
  assert.equal(k(err('ERR_OSSL_PEM_NO_START_LINE')), 'usage');
  assert.equal(k(err('ERR_OSSL_X509_KEY_VALUES_MISMATCH')), 'usage');
  assert.equal(k(err('UND_ERR_HEADERS_TIMEOUT')), 'unreachable');
  assert.equal(k(new Error('something odd')), 'unreachable');
});

test('a BenchError passes through unchanged', () => {
  const b = new BenchError('not-arc', 'x');
  assert.equal(classifyTransportError(b, 'u'), b);
});

test('refusal statuses', () => {
  assert.equal(refusalFor(403, 'u')?.kind, 'credentials');
  assert.equal(refusalFor(401, 'u')?.kind, 'credentials');
  assert.equal(refusalFor(404, 'u'), undefined);
  assert.equal(refusalFor(500, 'u'), undefined);
});

test('shortReason: BenchError message, else code and message on one line', () => {
  assert.equal(shortReason(new BenchError('http', 'boom')), 'boom');
  assert.equal(shortReason(err('EPIPE', 'write failed')), 'EPIPE: write failed');
  assert.equal(shortReason(err('EPIPE', 'EPIPE write failed')), 'EPIPE write failed');
  assert.equal(shortReason('plain'), 'plain');
});
