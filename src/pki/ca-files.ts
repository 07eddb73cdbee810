/**
 * The CA certificate files of a grid CA directory (`<hash>.0`, `<hash>.1`, ... and
 * `*.pem`), read once and then looked at again: one readdir and one stat per file, and
 * only a file whose inode, size or times changed is read again.
 *
 * An update of the directory (the monthly IGTF release: a package manager, rsync, a
 * configuration tool) may be caught half way: a file that held usable CA certificates and
 * now does not (cut short, being rewritten in place) keeps its previous certificates until
 * it reads cleanly again, and is reported (./followed-files.ts). A file that disappears is
 * gone: that is how a CA is removed. Temporary files of such tools (`.<name>.XXXXXX` of rsync, `<name>;<hex>` of rpm) do not
 * match the names read here, so they are never taken for CAs.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { lookAgain, type FileProblem, type FileRead, type Followed } from './followed-files.js';
import { canonicalEncoding } from './dn.js';
import { parseCertificate, pemBlocks, type ParsedCertificate } from './certificate.js';
import { PkiError } from './pki-error.js';

const HASHED = /^[0-9a-f]{8}\.\d+$/;
const PEM = /\.pem$/i;

export interface CaFilesScan {
  /** Every CA certificate of the usable files (aliases not yet merged). */
  readonly certs: readonly ParsedCertificate[];
  /** `kept`: the file was usable before, and its previous certificates are still trusted. */
  readonly problems: readonly FileProblem[];
  /** Whether any file was added, removed or read again since the previous scan. */
  readonly changed: boolean;
}

export class CaCertificateFiles {
  #files: ReadonlyMap<string, Followed<readonly ParsedCertificate[]>> = new Map();

  constructor(readonly dir: string) {}

  /** Look at the directory (throws PkiError when it cannot be listed). */
  scan(): CaFilesScan {
    let names: string[];
    try {
      names = readdirSync(this.dir)
        .filter((n) => HASHED.test(n) || PEM.test(n))
        .sort();
    } catch (e) {
      throw new PkiError(`cannot read CA directory ${this.dir}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    const look = lookAgain(this.dir, names, this.#files, (path): FileRead<readonly ParsedCertificate[]> => {
      let r: { certs: ParsedCertificate[]; problem?: string };
      try {
        r = caCertsFromPem(readFileSync(path, 'latin1'));
      } catch (e) {
        return { problem: `unreadable (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
      }
      // What parsed of a cut bundle (its leading certificates) is used while the rest is not there.
      if (r.problem === undefined) return { value: r.certs };
      return r.certs.length > 0 ? { problem: r.problem, value: r.certs } : { problem: r.problem };
    });
    this.#files = look.files;
    return {
      certs: [...look.files.values()].flatMap((f) => f.value),
      problems: look.problems,
      changed: look.changed,
    };
  }
}

/** The CA certificates of one PEM file; `problem` says why (some of) it cannot be used. */
export function caCertsFromPem(text: string): { certs: ParsedCertificate[]; problem?: string } {
  const blocks = pemBlocks(text);
  if (blocks.length === 0) return { certs: [], problem: 'no PEM certificate in the file' };
  const certs: ParsedCertificate[] = [];
  for (const der of blocks) {
    let c: ParsedCertificate;
    try {
      c = parseCertificate(der);
    } catch (e) {
      return { certs, problem: `not a valid certificate (${e instanceof Error ? e.message : 'parse error'})` };
    }
    if (!isCaCertificate(c)) return { certs, problem: `${c.subjectOneline} is not a CA certificate` };
    certs.push(c);
  }
  return { certs };
}

/**
 * A certificate may act as a CA if basicConstraints says so, or if it is an old
 * version 1 certificate (no extensions at all) that is self-issued: OpenSSL accepts
 * such roots as trust anchors.
 */
export function isCaCertificate(c: ParsedCertificate): boolean {
  if (c.basicConstraints !== undefined) return c.basicConstraints.ca;
  return c.version === 1 && canonicalEncoding(c.subject).equals(canonicalEncoding(c.issuer));
}
