/** Small tree walkers for the info tests (paths of local names, `/`-separated). */
import assert from 'node:assert/strict';
import { childrenNamed, textOf, type XmlElement } from '../../src/doc/element.js';

/** A part may filter on a child's text: `ComputingEndpoint[InterfaceVersion=1.0]`. */
export function all(e: XmlElement, path: string): XmlElement[] {
  let level = [e];
  for (const part of path.split('/')) {
    const m = /^([^[]+)\[([^=]+)=([^\]]*)\]$/.exec(part);
    const name = m ? m[1]! : part;
    level = level.flatMap((x) => childrenNamed(x, name));
    if (m) level = level.filter((x) => childrenNamed(x, m[2]!).some((c) => textOf(c) === m[3]));
  }
  return level;
}

export function at(e: XmlElement, path: string): XmlElement {
  const found = all(e, path);
  assert.equal(found.length, 1, `expected exactly one ${path}, found ${found.length}`);
  return found[0] as XmlElement;
}

export function text(e: XmlElement, path: string): string {
  return textOf(at(e, path));
}

export function texts(e: XmlElement, path: string): string[] {
  return all(e, path).map(textOf);
}

/** Every scalar in a JSON value, with its path, for "all values are strings" checks. */
export function scalars(v: unknown, path = '$'): Array<[string, unknown]> {
  if (v !== null && typeof v === 'object') {
    return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) =>
      scalars(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`),
    );
  }
  return [[path, v]];
}
