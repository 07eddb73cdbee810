/**
 * XML body → job descriptions: one for `<ActivityDescription>`, one per element child
 * of `<ActivityDescriptions>` (the bulk form pyarcrest and aCT send; its namespace is not
 * checked, as in A-REX).
 *
 * A body that is not well-formed XML (or that uses a DOCTYPE, too deep nesting, too many
 * attributes: src/doc/parse-xml.ts refuses those) is one failed item with A-REX's text
 * `Unable to parse job description.`, followed by the XML parser's message. A
 * well-formed document whose root is not an ADL ActivityDescription is
 * `emies:adl parsing error`, like every semantic ADL error.
 */
import { localName, type XmlElement } from '../../doc/element.js';
import { lineOf, parseXml, XmlParseError } from '../../doc/parse-xml.js';
import { ceError } from '../../errors/ce-error.js';
import { itemFailure, type ItemFailure } from '../item-failure.js';
import { defaultParseLimits, type ParseLimits } from '../limits.js';
import type { SubmissionItem } from '../submission-item.js';
import { inScopeNamespaces, renderStandalone } from '../xml-subtree.js';
import { ADL_NS, AdlError, adlToJobDescription } from './parse-adl.js';

export interface AdlBody {
  /** An `<ActivityDescriptions>` bulk document. */
  multi: boolean;
  items: SubmissionItem[];
}

export function adlFailure(message: string, line?: number): ItemFailure {
  return itemFailure('CE_ERR_JOBDESC_ADL_INVALID', `emies:adl parsing error:\n${message}`, line);
}

function isActivityDescription(e: XmlElement): boolean {
  return e.ns === ADL_NS && localName(e) === 'ActivityDescription';
}

function one(e: XmlElement, text: string, inheritedNs: Readonly<Record<string, string>>): SubmissionItem {
  if (!isActivityDescription(e)) {
    return adlFailure(`root element {${e.ns ?? ''}}${localName(e)} is not {${ADL_NS}}ActivityDescription`, lineOf(e));
  }
  try {
    return { ok: true, text, description: adlToJobDescription(e, inheritedNs) };
  } catch (err) {
    if (err instanceof AdlError) return adlFailure(err.message, err.line);
    throw err;
  }
}

/**
 * Local name of the document element, found by skipping the prolog (declaration,
 * processing instructions, comments, blanks) without parsing the document.
 */
export function rootLocalName(text: string): string | undefined {
  let i = 0;
  const n = text.length;
  for (;;) {
    while (i < n && text.charCodeAt(i) <= 0x20) i++;
    if (text.startsWith('<?', i)) {
      const e = text.indexOf('?>', i + 2);
      if (e < 0) return undefined;
      i = e + 2;
    } else if (text.startsWith('<!--', i)) {
      const e = text.indexOf('-->', i + 4);
      if (e < 0) return undefined;
      i = e + 3;
    } else break;
  }
  if (text.charCodeAt(i) !== 0x3c) return undefined;
  let j = i + 1;
  while (j < n && j - i < 256) {
    const c = text.charCodeAt(j);
    if (c <= 0x20 || c === 0x3e || c === 0x2f) break;
    j++;
  }
  const q = text.slice(i + 1, j);
  const colon = q.indexOf(':');
  return colon < 0 ? q : q.slice(colon + 1);
}

/** Parses an XML body (decoded text starting at its `<`). */
export function parseAdlBody(text: string, limits: ParseLimits = defaultParseLimits): AdlBody {
  // A single description over the size limit is refused without building its tree.
  if (text.length > limits.maxDescriptionBytes / 4 && Buffer.byteLength(text, 'utf8') > limits.maxDescriptionBytes) {
    if (rootLocalName(text) !== 'ActivityDescriptions')
      return { multi: false, items: [itemFailure('CE_ERR_JOBDESC_TOO_BIG')] };
  }
  let root: XmlElement;
  try {
    root = parseXml(text, {
      // The request body limit of the HTTP layer bounds the whole document.
      maxBytes: Number.MAX_SAFE_INTEGER,
      maxDepth: limits.maxNestingDepth,
      maxAttributes: limits.maxXmlAttributes,
      maxElements: Number.MAX_SAFE_INTEGER,
      positions: true,
    });
  } catch (e) {
    if (!(e instanceof XmlParseError)) throw e;
    // saxes prefixes its own "line:column: "; the position is repeated at the end anyway.
    const detail = e.message.replace(/^\d+:\d+: /, '');
    return {
      multi: false,
      items: [itemFailure('CE_ERR_JOBDESC_XML_MALFORMED', `Unable to parse job description.\nXML: ${detail}`, e.line)],
    };
  }
  if (localName(root) !== 'ActivityDescriptions') return { multi: false, items: [one(root, text, {})] };

  const inherited = inScopeNamespaces(root);
  const items: SubmissionItem[] = [];
  for (const c of root.children) {
    if (typeof c === 'string') continue;
    if (items.length >= limits.maxItems)
      throw ceError('CE_ERR_JOBDESC_TOO_MANY_ITEMS', `More than ${limits.maxItems} job descriptions in one request`);
    const itemText = renderStandalone(c, inherited);
    if (Buffer.byteLength(itemText, 'utf8') > limits.maxDescriptionBytes)
      items.push(itemFailure('CE_ERR_JOBDESC_TOO_BIG'));
    else items.push(one(c, itemText, inherited));
  }
  return { multi: true, items };
}

/** One ADL description (tests, tools): the description or the item failure. */
export function parseAdl(text: string, limits: ParseLimits = defaultParseLimits): SubmissionItem {
  const [item] = parseAdlBody(text, limits).items;
  return item ?? adlFailure('empty ActivityDescriptions');
}
