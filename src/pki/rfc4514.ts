/**
 * The unambiguous form of a subject, the owner key of jobs, delegations and pool leases.
 *
 * The one-line form (dn.ts `toOneline`) writes `/` before every RDN and `+` between the
 * values of a multi-valued one, but escapes neither inside a value: `O=X/OU=Y` as one
 * value and `O=X`, `OU=Y` as two RDNs print the same bytes, and so do `CN=a+UID=b` as
 * one value and a two-valued RDN. The form here (RFC 4514: RDNs last to first, `,`
 * between them, `+` between the values of one, `\` escaping the specials) is unambiguous:
 * two subjects get the same string only when every RDN has the same attribute types with
 * the same value bytes.
 *
 * Values are written from their bytes as signed: printable ASCII as is (the RFC 4514
 * specials, a leading `#` or space and a trailing space after a `\`), every other byte as
 * `\HH`, which is RFC 4514's hex-pair escape (for a UTF-8 value, its UTF-8 octets). The
 * string type is not part of the key, as it is not part of the one-line form: so a
 * one-line DN that reads back unambiguously converts to exactly the key its certificate
 * gives (`rfc4514OfOneline`), which is how stored owners are migrated.
 *
 * A subject is ambiguous when its one-line form reads back into a different RDN sequence
 * (`onelineIsAmbiguous`). Reading back splits at a `/` or `+` followed by something that
 * looks like an attribute type and `=` (a name of letters, digits and `-` starting with a
 * letter, or a dotted OID), and turns `\xHH` into the byte: `CN=host/name.cern.ch` reads
 * back as it was, `O=X/OU=Y` as one value does not.
 */
import { attrName, type Rdn } from './dn.js';

/** One attribute value as the key sees it: its type's name (short name or dotted OID) and its bytes. */
interface KeyAva {
  readonly type: string;
  readonly value: Uint8Array;
}

const SPECIAL = new Set([...'"+,;<>\\'].map((c) => c.charCodeAt(0)));
const SPACE = 0x20;
const HASH = 0x23;

function escapeValue(v: Uint8Array): string {
  let out = '';
  for (const [i, b] of v.entries()) {
    const edgeSpace = b === SPACE && (i === 0 || i === v.length - 1);
    if (SPECIAL.has(b) || edgeSpace || (b === HASH && i === 0)) out += `\\${String.fromCharCode(b)}`;
    else if (b < 0x20 || b > 0x7e) out += `\\${b.toString(16).toUpperCase().padStart(2, '0')}`;
    else out += String.fromCharCode(b);
  }
  return out;
}

function keyOf(rdns: readonly (readonly KeyAva[])[]): string {
  return rdns
    .map((rdn) => rdn.map((a) => `${a.type}=${escapeValue(a.value)}`).join('+'))
    .reverse()
    .join(',');
}

/** The RFC 4514 form of a subject: the owner key of a certificate's holder. */
export function rfc4514Of(rdns: readonly Rdn[]): string {
  return keyOf(rdns.map((rdn) => rdn.map((a) => ({ type: attrName(a.oid), value: a.value }))));
}

/** Where a separator may start: `/` or `+` followed by an attribute type and `=`. */
const SEPARATOR = /[/+](?=(?:[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)*)=)/g;
const ESCAPED_BYTE = /\\x([0-9A-Fa-f]{2})/y;

function valueBytes(text: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < text.length;) {
    ESCAPED_BYTE.lastIndex = i;
    const m = ESCAPED_BYTE.exec(text);
    if (m !== null) {
      out.push(parseInt(m[1] as string, 16));
      i += 4;
    } else {
      const cp = text.codePointAt(i) as number;
      out.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
      i += cp > 0xffff ? 2 : 1;
    }
  }
  return Uint8Array.from(out);
}

/**
 * The RDN sequence a one-line DN reads back as, or undefined when it is not one (it does
 * not start with `/` followed by an attribute type and `=`). The empty string is the
 * empty name.
 */
function readOneline(oneline: string): KeyAva[][] | undefined {
  if (oneline === '') return [];
  const cuts = [...oneline.matchAll(SEPARATOR)].map((m) => m.index);
  if (cuts[0] !== 0 || oneline[0] !== '/') return undefined;
  const rdns: KeyAva[][] = [];
  for (const [k, at] of cuts.entries()) {
    const piece = oneline.slice(at + 1, cuts[k + 1] ?? oneline.length);
    const eq = piece.indexOf('=');
    const ava = { type: piece.slice(0, eq), value: valueBytes(piece.slice(eq + 1)) };
    if (oneline[at] === '/') rdns.push([ava]);
    else (rdns[rdns.length - 1] as KeyAva[]).push(ava);
  }
  return rdns;
}

/**
 * The owner key of a one-line DN as it reads back (the migration of stored owners), or
 * undefined when it does not read as a one-line DN at all.
 */
export function rfc4514OfOneline(oneline: string): string | undefined {
  const rdns = readOneline(oneline);
  return rdns === undefined ? undefined : keyOf(rdns);
}

/** Whether the one-line form of `rdns` reads back as another RDN sequence (so names another subject too). */
export function onelineIsAmbiguous(rdns: readonly Rdn[], oneline: string): boolean {
  return rfc4514OfOneline(oneline) !== rfc4514Of(rdns);
}

/**
 * The owner key of an owner stored before owners were keyed on the RFC 4514 form (the
 * store's migration 12, job credential files written before it): a one-line DN (`/...`)
 * converts to the key its certificate gives now; a bearer token's `<iss>#<sub>` is
 * already its key. A value starting with `/` that does not read as a one-line DN stays
 * as it is: no caller's key starts with `/` (an RFC 4514 form starts with an attribute
 * type, a token's with `https:`), so what it owns is left to the administrators.
 */
export function ownerKeyOfStored(owner: string): string {
  if (!owner.startsWith('/')) return owner;
  return rfc4514OfOneline(owner) ?? owner;
}
