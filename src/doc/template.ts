/**
 * Compiled document templates: a document whose shape is fixed (a root, then named
 * fields in a fixed order, each absent, one text, several texts or a group of fields),
 * written straight to JSON or XML text from a value, with no element tree per document.
 * The GLUE2 ComputingActivity of `action=info` is one: a thousand of them per answer
 * cost more to build as trees and render than everything else on that path.
 *
 * The writers render exactly what the generic renderers (render-json.ts, render-xml.ts)
 * give for the tree `element()` builds from the same template, and the tree is what
 * the template describes, so there is one description of the document and three
 * renderings of it (HTML renders the tree). The JSON rules that make this simple:
 *  - names within one level are unique (checked when compiling), so grouping children
 *    by name keeps the template's order: a field is one member, one text a string,
 *    several an array;
 *  - an absent field (no value, an empty list, a group whose fields are all absent)
 *    writes nothing; a text may be empty (`<X></X>`, `"X":""`);
 *  - the root's attributes go last, under `_attributes`, without namespace declarations.
 */
import { el, localPart, type XmlElement } from './element.js';
import { escapeAttr, escapeText } from './render-xml.js';
import type { WrittenDoc } from './written-doc.js';

/** One field of a template: how its value is taken from the document's input `T`. */
export type Field<T> =
  | { readonly kind: 'text'; readonly name: string; readonly value: (x: T) => string | undefined }
  | { readonly kind: 'texts'; readonly name: string; readonly values: (x: T) => readonly string[] }
  | { readonly kind: 'group'; readonly name: string; readonly fields: readonly Field<T>[] };

/** An element with one text, or none when the value is undefined. */
export function textField<T>(name: string, value: (x: T) => string | undefined): Field<T> {
  return { kind: 'text', name, value };
}

/** One element per value, in order (none for an empty list). */
export function textsField<T>(name: string, values: (x: T) => readonly string[]): Field<T> {
  return { kind: 'texts', name, values };
}

/** A container of fields, left out when all of them are absent. */
export function groupField<T>(name: string, fields: readonly Field<T>[]): Field<T> {
  return { kind: 'group', name, fields };
}

/** The root's attributes in the three forms the writers need, made once per set of values. */
export interface RootAttributes {
  readonly record: Readonly<Record<string, string>>;
  /** `,"_attributes":{...}` or '' when only namespace declarations are there. */
  readonly json: string;
  /** ` k="v"` for each attribute, escaped. */
  readonly xml: string;
}

export function rootAttributes(record: Readonly<Record<string, string>>): RootAttributes {
  const forJson: Record<string, string> = {};
  let any = false;
  let xml = '';
  for (const [k, v] of Object.entries(record)) {
    xml += ' ' + k + '="' + escapeAttr(v) + '"';
    if (k === 'xmlns' || k.startsWith('xmlns:')) continue;
    forJson[localPart(k)] = v;
    any = true;
  }
  return { record, json: any ? ',"_attributes":' + JSON.stringify(forJson) : '', xml };
}

interface Compiled<T> {
  readonly field: Field<T>;
  /** `"Name":` */
  readonly key: string;
  readonly open: string;
  readonly close: string;
  readonly fields: readonly Compiled<T>[];
}

function compile<T>(fields: readonly Field<T>[], where: string): Compiled<T>[] {
  const seen = new Set<string>();
  return fields.map((f) => {
    // Unique local names keep JSON grouping (by local name, order of first appearance) equal to template order.
    const local = localPart(f.name);
    if (seen.has(local)) throw new Error(`template ${where}: field ${f.name} appears twice`);
    seen.add(local);
    return {
      field: f,
      key: JSON.stringify(local) + ':',
      open: '<' + f.name + '>',
      close: '</' + f.name + '>',
      fields: f.kind === 'group' ? compile(f.fields, `${where}/${f.name}`) : [],
    };
  });
}

/** The JSON members of `fields` for `x`, comma-separated ('' when all are absent). */
function jsonMembers<T>(fields: readonly Compiled<T>[], x: T): string {
  let s = '';
  let sep = '';
  for (const c of fields) {
    const f = c.field;
    let v: string;
    if (f.kind === 'text') {
      const t = f.value(x);
      if (t === undefined) continue;
      v = JSON.stringify(t);
    } else if (f.kind === 'texts') {
      const ts = f.values(x);
      if (ts.length === 0) continue;
      v = ts.length === 1 ? JSON.stringify(ts[0]) : JSON.stringify(ts);
    } else {
      const inner = jsonMembers(c.fields, x);
      if (inner === '') continue;
      v = '{' + inner + '}';
    }
    s += sep + c.key + v;
    sep = ',';
  }
  return s;
}

function xmlChildren<T>(fields: readonly Compiled<T>[], x: T): string {
  let s = '';
  for (const c of fields) {
    const f = c.field;
    if (f.kind === 'text') {
      const v = f.value(x);
      if (v !== undefined) s += c.open + escapeText(v) + c.close;
    } else if (f.kind === 'texts') {
      for (const v of f.values(x)) s += c.open + escapeText(v) + c.close;
    } else {
      const inner = xmlChildren(c.fields, x);
      if (inner !== '') s += c.open + inner + c.close;
    }
  }
  return s;
}

function elements<T>(fields: readonly Compiled<T>[], x: T): XmlElement[] {
  const out: XmlElement[] = [];
  for (const c of fields) {
    const f = c.field;
    if (f.kind === 'text') {
      const v = f.value(x);
      if (v !== undefined) out.push(el(f.name, v));
    } else if (f.kind === 'texts') {
      for (const v of f.values(x)) out.push(el(f.name, v));
    } else {
      const kids = elements(c.fields, x);
      if (kids.length > 0) out.push(el(f.name, kids));
    }
  }
  return out;
}

/** A document's content without its root: the JSON members and the XML children, each made once when first asked. */
export interface DocBodies {
  json(): string;
  xml(): string;
}

/** A document written from a template, with its content apart from the root (which carries per-answer attributes). */
export interface TemplateDoc extends WrittenDoc {
  readonly bodies: DocBodies;
}

export interface Template<T> {
  readonly name: string;
  /** The document of `x` with root attributes `attrs` (made once with rootAttributes and reused). */
  doc(x: T, attrs: RootAttributes): TemplateDoc;
  /** A document of this template from content written before, under (possibly other) root attributes. */
  wrap(bodies: DocBodies, attrs: RootAttributes, element: () => XmlElement): TemplateDoc;
}

export function compileTemplate<T>(name: string, fields: readonly Field<T>[]): Template<T> {
  const compiled = compile(fields, name);
  const open = '<' + name;
  const close = '</' + name + '>';
  const wrap = (bodies: DocBodies, attrs: RootAttributes, element: () => XmlElement): TemplateDoc => ({
    name,
    bodies,
    element,
    json: () => {
      const members = bodies.json();
      // Without element children the root is a leaf: its (empty) text, attributes dropped.
      return members === '' ? '""' : '{' + members + attrs.json + '}';
    },
    xml: () => {
      const kids = bodies.xml();
      return kids === '' ? open + attrs.xml + '/>' : open + attrs.xml + '>' + kids + close;
    },
  });
  return {
    name,
    wrap,
    doc: (x, attrs) => {
      let json: string | undefined;
      let xml: string | undefined;
      const bodies: DocBodies = {
        json: () => (json ??= jsonMembers(compiled, x)),
        xml: () => (xml ??= xmlChildren(compiled, x)),
      };
      return wrap(bodies, attrs, () => el(name, elements(compiled, x), { ...attrs.record }));
    },
  };
}
