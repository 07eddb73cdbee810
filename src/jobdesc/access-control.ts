/**
 * Job access-control documents (xRSL `acl`, ADL `ng:AccessControl`): an element with a
 * `Type` child (`GACL` or `ARC`, optional) and a `Content` child holding the policy, as
 * text or as an element. The acceptance checks refuse a missing `Content` and an unknown
 * `Type` with A-REX's texts; here we only extract them.
 */
import { childElements, localName, textOf, type XmlElement } from '../doc/element.js';
import { parseXml } from '../doc/parse-xml.js';
import type { AccessControl } from '../vocabulary/job-description.js';
import { inScopeNamespaces, renderStandalone } from './xml-subtree.js';

const ACL_LIMITS = { maxBytes: 1024 * 1024, maxDepth: 32, maxAttributes: 64, maxElements: 10_000 };

/** Parses ACL XML text; throws XmlParseError when it is not well-formed. */
export function parseAccessControlText(xml: string): AccessControl {
  return accessControlFromElement(parseXml(xml, ACL_LIMITS), {});
}

export function accessControlFromElement(root: XmlElement, inherited: Readonly<Record<string, string>>): AccessControl {
  const scope = inScopeNamespaces(root, inherited);
  const out: AccessControl = {};
  for (const c of childElements(root)) {
    const name = localName(c);
    if (name === 'Type' && out.type === undefined) out.type = textOf(c).trim();
    else if (name === 'Content' && out.content === undefined) {
      const inner = childElements(c)[0];
      out.content = inner ? renderStandalone(inner, inScopeNamespaces(c, scope)) : textOf(c).trim();
    }
  }
  if (out.content === '') delete out.content;
  return out;
}
