/**
 * Safe, namespace-aware XML parsing into the document model, for every XML body
 * Ceres accepts (ADL job descriptions, job id lists, PROPFIND bodies).
 *
 * Hostile-input rules (each has a test): no DOCTYPE at all (so no entity
 * declarations, no "billion laughs", no external entities); only the five predefined
 * entities and character references; bounded depth, attribute count, element count
 * and input size. The parser is streaming and linear in the input: nothing here can
 * make it allocate more than a small multiple of the input.
 */
import { SaxesParser } from 'saxes';
import type { XmlElement, XmlNode } from './element.js';

export interface XmlLimits {
  maxBytes: number;
  maxDepth: number;
  maxAttributes: number;
  maxElements: number;
  /**
   * Record each element's line (`lineOf`), for messages that point into the document
   * (the web's submission form shows a description's errors beside their lines). Off by
   * default: one map entry per element.
   */
  positions?: boolean;
}

/** Lines of elements parsed with `positions` (weakly held: they go with the tree). */
const lines = new WeakMap<XmlElement, number>();

/** The 1-based line where `e`'s start tag ends, if it was parsed with `positions`. */
export function lineOf(e: XmlElement): number | undefined {
  return lines.get(e);
}

export const defaultXmlLimits: XmlLimits = {
  maxBytes: 16 * 1024 * 1024,
  maxDepth: 64,
  maxAttributes: 128,
  maxElements: 1_000_000,
};

export class XmlParseError extends Error {
  override readonly name = 'XmlParseError';
  constructor(
    message: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(line === undefined ? message : `${message} (line ${line}, column ${column ?? 0})`);
  }
}

interface Building {
  line: number;
  name: string;
  ns: string;
  attrs: Record<string, string> | undefined;
  children: XmlNode[];
}

export function parseXml(input: string | Buffer, limits: Partial<XmlLimits> = {}): XmlElement {
  const lim = { ...defaultXmlLimits, ...limits };
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    if (input.length > lim.maxBytes) throw new XmlParseError(`XML document larger than ${lim.maxBytes} bytes`);
    text = decodeUtf8Strict(input);
  }
  if (text.length > lim.maxBytes) throw new XmlParseError(`XML document larger than ${lim.maxBytes} bytes`);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);

  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: Building[] = [];
  let root: XmlElement | undefined;
  let elements = 0;
  const fail = (msg: string): never => {
    throw new XmlParseError(msg, parser.line, parser.column);
  };

  parser.on('doctype', () => fail('DOCTYPE declarations are not allowed'));
  parser.on('opentag', (tag) => {
    if (++elements > lim.maxElements) fail(`more than ${lim.maxElements} elements`);
    if (stack.length >= lim.maxDepth) fail(`elements nested deeper than ${lim.maxDepth}`);
    let attrs: Record<string, string> | undefined;
    const entries = Object.values(tag.attributes);
    if (entries.length > lim.maxAttributes) fail(`more than ${lim.maxAttributes} attributes on one element`);
    // A null-prototype record: an attribute called __proto__ is kept as data.
    for (const a of entries) (attrs ??= Object.create(null) as Record<string, string>)[a.name] = a.value;
    stack.push({ line: parser.line, name: tag.name, ns: tag.uri, attrs, children: [] });
  });
  const addText = (t: string): void => {
    const top = stack[stack.length - 1];
    if (!top) return; // whitespace outside the root
    const last = top.children[top.children.length - 1];
    if (typeof last === 'string') top.children[top.children.length - 1] = last + t;
    else top.children.push(t);
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('closetag', () => {
    const b = stack.pop();
    if (!b) return fail('unbalanced closing tag');
    const e: XmlElement = b.attrs
      ? { name: b.name, ns: b.ns, attrs: b.attrs, children: b.children }
      : { name: b.name, ns: b.ns, children: b.children };
    if (lim.positions === true) lines.set(e, b.line);
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(e);
    else root = e;
  });
  try {
    parser.write(text).close();
  } catch (e) {
    if (e instanceof XmlParseError) throw e;
    // saxes reports "line:column: message"; keep its text, it is about the input only.
    throw new XmlParseError(
      e instanceof Error ? e.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '') : 'malformed XML',
      parser.line,
      parser.column,
    );
  }
  if (!root) throw new XmlParseError('no root element');
  return root;
}

const strictDecoder = new TextDecoder('utf-8', { fatal: true });
export function decodeUtf8Strict(b: Uint8Array): string {
  try {
    return strictDecoder.decode(b);
  } catch {
    throw new XmlParseError('input is not valid UTF-8');
  }
}
