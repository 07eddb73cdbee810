// The first element of a name in a built document (src/doc/element.ts), depth first, and its text.
import type { XmlElement } from '../../src/doc/element.js';

export function findElement(e: XmlElement, name: string): XmlElement | undefined {
  if (e.name === name) return e;
  for (const c of e.children) {
    if (typeof c === 'string') continue;
    const hit = findElement(c, name);
    if (hit) return hit;
  }
  return undefined;
}

export function elementText(e: XmlElement, name: string): string | undefined {
  return findElement(e, name)
    ?.children.map((c) => (typeof c === 'string' ? c : ''))
    .join('');
}
