/**
 * Element helpers of the GLUE2 builders, enforcing the two document rules: an
 * unknown value makes no element, and no container is emitted empty (the JSON
 * rendering would turn it into a string, which JSON clients cannot walk into).
 */
import { el, type XmlElement } from '../doc/element.js';
import { nonEmpty } from './glue2-values.js';

export type MaybeElement = XmlElement | undefined;

/** A simple-valued element, or nothing when the value is unknown. */
export function leaf(name: string, value: string | undefined): MaybeElement {
  return value === undefined ? undefined : el(name, value);
}

/** One element per non-blank value (GLUE2 multi-valued properties). */
export function leaves(name: string, values: readonly string[] | undefined): XmlElement[] {
  const out: XmlElement[] = [];
  for (const v of values ?? []) if (nonEmpty(v) !== undefined) out.push(el(name, v));
  return out;
}

/** A container, or nothing when it would be empty. */
export function group(name: string, children: readonly MaybeElement[], attrs?: Record<string, string>): MaybeElement {
  const kids = children.filter((c): c is XmlElement => c !== undefined);
  return kids.length === 0 ? undefined : el(name, kids, attrs);
}
