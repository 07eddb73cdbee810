/**
 * The one document model. Every structured response (version list, job lists, bulk
 * results, delegation lists, session listings, the GLUE2 info document) is built as
 * an element tree and rendered to JSON, XML or HTML by src/doc/render-*.ts, chosen
 * by content negotiation. Parsed XML request bodies use it too, and JSON bodies are
 * read with its rules (json-input.ts), so handlers read one shape whatever the client sent.
 */
export interface XmlElement {
  /** Qualified name as serialised, e.g. `jobs` or `d:multistatus`. */
  readonly name: string;
  /** Namespace URI, set by the parser (builders may leave it out). */
  readonly ns?: string;
  /** Attributes, including `xmlns`/`xmlns:p` declarations, in output order. */
  readonly attrs?: Readonly<Record<string, string>>;
  readonly children: readonly XmlNode[];
}
export type XmlNode = XmlElement | string;

type Child = XmlNode | null | undefined | false | readonly Child[];

/**
 * Build an element. Children may be nested arrays; null/undefined/false are skipped,
 * which keeps optional fields terse: `el('job', [el('id', id), state && el('state', state)])`.
 */
export function el(name: string, children?: Child | number, attrs?: Record<string, string>): XmlElement {
  const out: XmlNode[] = [];
  if (children !== undefined) pushChild(out, children);
  return attrs === undefined ? { name, children: out } : { name, attrs, children: out };
}

// A plain function, not a closure per call: bulk answers build thousands of elements.
function pushChild(out: XmlNode[], c: Child | number): void {
  if (c === null || c === undefined || c === false) return;
  if (typeof c === 'string') out.push(c);
  else if (typeof c === 'number') out.push(String(c));
  else if (Array.isArray(c)) for (const x of c as readonly Child[]) pushChild(out, x);
  else out.push(c as XmlElement);
}

export function localName(e: XmlElement): string {
  return localPart(e.name);
}

/** `d:href` -> `href`; names without a prefix unchanged. */
export function localPart(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

export function isElement(n: XmlNode): n is XmlElement {
  return typeof n !== 'string';
}

export function childElements(e: XmlElement): XmlElement[] {
  return e.children.filter(isElement);
}

/** Concatenated text of the direct text children. */
export function textOf(e: XmlElement): string {
  let s = '';
  for (const c of e.children) if (typeof c === 'string') s += c;
  return s;
}

/** Direct children with the given local name (namespace-agnostic). */
export function childrenNamed(e: XmlElement, local: string): XmlElement[] {
  return e.children.filter((c): c is XmlElement => typeof c !== 'string' && localName(c) === local);
}

export function firstChild(e: XmlElement, local: string): XmlElement | undefined {
  for (const c of e.children) if (typeof c !== 'string' && localName(c) === local) return c;
  return undefined;
}
