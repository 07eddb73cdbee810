/**
 * Sending documents in the negotiated format. The one place that decides bytes and
 * Content-Type for every structured answer (success and error alike).
 */
import type { FastifyReply } from 'fastify';
import type { XmlElement } from '../doc/element.js';
import { renderJson } from '../doc/render-json.js';
import { renderXml } from '../doc/render-xml.js';
import { renderHtml } from '../doc/render-html.js';
import { contentTypeOf, type Format } from './negotiate.js';

export function renderDoc(doc: XmlElement, format: Format, forcedArrays: readonly string[] = []): string {
  switch (format) {
    case 'json':
      return renderJson(doc, forcedArrays);
    case 'xml':
      return renderXml(doc);
    case 'html':
      return renderHtml(doc);
  }
}

/** Reason phrases must be one line of visible ASCII (RFC 9112 §4). */
export function safeReason(s: string): string {
  const r = s.replace(/[^\x20-\x7e]+/g, ' ').trim();
  return r.length > 200 ? `${r.slice(0, 197)}...` : r;
}

export function sendDoc(
  reply: FastifyReply,
  format: Format,
  status: number,
  doc: XmlElement,
  forcedArrays: readonly string[] = [],
  reason?: string,
): FastifyReply {
  return sendRendered(reply, format, status, renderDoc(doc, format, forcedArrays), reason);
}

/**
 * A document already rendered in `format` (by a specialised writer that renders as renderDoc
 * would), as text or as its UTF-8 bytes (status-answer.ts writes those directly).
 */
export function sendRendered(
  reply: FastifyReply,
  format: Format,
  status: number,
  body: string | Buffer,
  reason?: string,
): FastifyReply {
  if (reason !== undefined) reply.raw.statusMessage = safeReason(reason);
  // A Buffer keeps Fastify from appending a charset to the media type: clients compare it.
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return reply.code(status).header('content-type', contentTypeOf[format]).send(bytes);
}

/** Empty-bodied answer (e.g. 200 after a delegation PUT, 202 after a DELETE). */
export function sendEmpty(reply: FastifyReply, status: number, reason?: string): FastifyReply {
  if (reason !== undefined) reply.raw.statusMessage = safeReason(reason);
  return reply.code(status).send();
}
