/**
 * The two text rules of publishing in LDAP: a DN's attribute values escaped by RFC 4514,
 * and a line of LDIF by RFC 2849. Both also keep to what BDII's `bdii-update` (6.0)
 * parses, which is less than the RFCs allow:
 *  - it reads a DN from the text after `dn: ` and cannot decode a base64 `dn::`, so a
 *    DN is written in ASCII only: every other byte (and every control character) as a
 *    `\XX` hex pair, which RFC 4514 allows for any character;
 *  - it finds entries by searching the text for `dn:` anywhere, so `dn:` never appears
 *    inside a DN (the colon becomes `\3a`) or a plain value (such a value is base64);
 *  - it unfolds lines by removing every newline followed by a space, so no value starts
 *    with a space (RFC 2849 makes those base64 anyway) and lines are never folded.
 */

// RFC 4514 section 2.4: these are escaped wherever they occur.
const DN_SPECIAL = new Set([',', '+', '"', '\\', '<', '>', ';', '=']);

function hexPairs(ch: string): string {
  let out = '';
  for (const b of Buffer.from(ch, 'utf8')) out += `\\${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

/** One attribute value as it stands in a DN (`GLUE2ShareID=<this>,...`). */
export function escapeDnValue(value: string): string {
  let out = '';
  const chars = Array.from(value);
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    const code = ch.codePointAt(0)!;
    const first = i === 0;
    const last = i === chars.length - 1;
    if (DN_SPECIAL.has(ch)) out += `\\${ch}`;
    else if (code < 0x20 || code > 0x7e) out += hexPairs(ch);
    else if ((first && (ch === ' ' || ch === '#')) || (last && ch === ' ')) out += `\\${ch}`;
    else if (ch === ':' && /dn$/i.test(out)) out += '\\3A';
    else out += ch;
  }
  return out;
}

/** A DN from its RDNs, leaf first: `[['GLUE2ShareID', id], ['o', 'glue']]`. */
export function dnOf(rdns: readonly (readonly [string, string])[]): string {
  return rdns.map(([attr, value]) => `${attr}=${escapeDnValue(value)}`).join(',');
}

// RFC 2849 SAFE-STRING: SAFE-INIT-CHAR then SAFE-CHARs (printable ASCII here, so the
// file reads the same in any locale; everything else goes base64).
const SAFE_STRING = /^(?:[\x21-\x39\x3b\x3d-\x7e][\x20-\x7e]*)?$/;

/** One `attr: value` line, base64 (`attr:: ...`) where RFC 2849 or BDII needs it. */
export function ldifLine(attr: string, value: string): string {
  const plain = SAFE_STRING.test(value) && !value.endsWith(' ') && !/dn:/i.test(value);
  return plain ? `${attr}: ${value}` : `${attr}:: ${Buffer.from(value, 'utf8').toString('base64')}`;
}
