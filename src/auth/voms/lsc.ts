/**
 * LSC files (`vomsdir/<vo>/<voms-host>.lsc`): which certificate chain a VO's VOMS
 * server signs with, by names only, so that a renewed server certificate needs no
 * change at the relying party. Line 1 is the server certificate's subject DN, line 2
 * its issuer's subject, further lines the issuers above (a longer chain). Lines are
 * OpenSSL one-line DNs (`/DC=ch/DC=cern/CN=voms.cern.ch`); blank lines and `#`
 * comments are ignored; several accepted chains may be given, separated by a line of
 * dashes containing `NEXT CHAIN`.
 */
import { encodeOnelineDn, parseName, sameName, toOneline, type Rdn } from '../../pki/dn.js';

/** One accepted chain: subject DN first, then each issuer's. */
export type LscChain = readonly string[];

export function parseLsc(text: string): LscChain[] {
  const chains: string[][] = [[]];
  for (const line of text.split(/\r?\n/)) {
    const l = line.trim();
    if (l === '' || l.startsWith('#')) continue;
    if (/^-+\s*NEXT CHAIN\s*-+$/i.test(l)) {
      chains.push([]);
      continue;
    }
    (chains[chains.length - 1] as string[]).push(l);
  }
  return chains.filter((c) => c.length >= 2);
}

/**
 * Whether a DN line of an LSC names `rdns`: compared as OpenSSL compares names
 * (case and spacing of values do not matter) when the line can be encoded, else as
 * text against the one-line form.
 */
export function lscNames(line: string, rdns: readonly Rdn[]): boolean {
  try {
    return sameName(parseName(encodeOnelineDn(line)), rdns);
  } catch {
    return line === toOneline(rdns);
  }
}

/** Whether the names of a certificate path (subject, issuer, issuer's issuer, ...) match one chain of the LSC. */
export function lscAccepts(chains: readonly LscChain[], path: readonly (readonly Rdn[])[]): boolean {
  return chains.some((c) => c.length <= path.length && c.every((line, i) => lscNames(line, path[i] as readonly Rdn[])));
}
