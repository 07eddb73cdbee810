/**
 * New credentials or trusted CAs for a running TLS listener (a renewed host certificate,
 * a changed CA directory). Node's `setSecureContext` applies to the handshakes that
 * follow; connections already open keep the context they were made with, so nothing is
 * dropped. The new context is built once first: a key that is not the certificate's
 * throws there, before the listener's own fields are touched, and the old context stays.
 */
import { createSecureContext, type Server as TlsServer } from 'node:tls';
import { tlsServerOptions, type TlsServerCredentials } from './tls-options.js';

export function replaceSecureContext(server: TlsServer, c: TlsServerCredentials): void {
  const options = tlsServerOptions(c);
  createSecureContext(options);
  server.setSecureContext(options);
}
