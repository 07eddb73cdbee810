/**
 * Cutting an element out of a parsed document so it stands alone: the namespace
 * declarations it relies on may sit on its ancestors (`<ActivityDescriptions
 * xmlns:adl=...>` around `<adl:ActivityDescription>`), so they are copied onto it.
 */
import type { XmlElement } from '../doc/element.js';
import { renderXml } from '../doc/render-xml.js';

/** The `xmlns` / `xmlns:p` attributes of `e`, merged over `inherited`. */
export function inScopeNamespaces(
  e: XmlElement,
  inherited: Readonly<Record<string, string>> = {},
): Record<string, string> {
  let out: Record<string, string> | undefined;
  if (e.attrs) {
    for (const [k, v] of Object.entries(e.attrs)) {
      if (k === 'xmlns' || k.startsWith('xmlns:')) (out ??= { ...inherited })[k] = v;
    }
  }
  return out ?? { ...inherited };
}

/** `e` serialised with every inherited namespace declaration it does not redeclare. */
export function renderStandalone(e: XmlElement, inherited: Readonly<Record<string, string>>): string {
  const attrs: Record<string, string> = { ...inherited, ...(e.attrs ?? {}) };
  const copy: XmlElement =
    Object.keys(attrs).length === 0
      ? { name: e.name, children: e.children }
      : { name: e.name, attrs, children: e.children };
  return renderXml(copy);
}
