/**
 * The VOMS trust directory (`vomsDir`, /etc/grid-security/vomsdir by default), kept
 * current while the service runs:
 *
 *   <vomsDir>/<vo>/<voms-host>.lsc   which server (by subject and issuer DNs) may sign for <vo>
 *   <vomsDir>/*.pem, <vomsDir>/<vo>/*.pem
 *                                    VOMS server certificates (the older layout; needed only
 *                                    for ACs that do not embed the server's certificate)
 *
 * As the CRLs of the CA directory (src/pki/revocation.ts), it is looked at again at most
 * every `recheckMs` from the verification path itself: one stat per directory and file;
 * the whole (small) tree is read again when any stamp (inode, size, times) changed, and
 * `generation` moves, which empties the verified-chain cache. An absent directory means
 * VOMS is off (said once); it is picked up when it appears.
 */
import { readFileSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { parseCertificate, pemBlocks, type ParsedCertificate } from '../../pki/certificate.js';
import { parseLsc, type LscChain } from './lsc.js';

/** How often the directory is looked at again by default. */
export const DEFAULT_VOMSDIR_RECHECK_MS = 5_000;

const CERT_FILE = /(\.pem|^[0-9a-f]{8}\.\d+)$/i;
const LSC_FILE = /\.lsc$/;

export interface VomsLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

interface Content {
  readonly lsc: ReadonlyMap<string, ReadonlyMap<string, readonly LscChain[]>>;
  readonly certs: readonly ParsedCertificate[];
}

const EMPTY: Content = { lsc: new Map(), certs: [] };

export class VomsDir {
  #content: Content = EMPTY;
  #stamp: string | undefined;
  #checkedAt = -Infinity;
  #generation = 0;
  #present: boolean | undefined;

  constructor(
    readonly dir: string,
    readonly recheckMs: number = DEFAULT_VOMSDIR_RECHECK_MS,
    readonly log?: VomsLog,
  ) {}

  /** Whether the directory existed at the last look. */
  get present(): boolean {
    return this.#present === true;
  }

  /**
   * Look again if `recheckMs` has passed (or the clock went back: a look stamped in the
   * future must not stop the next ones); the result changes whenever the content did.
   */
  refresh(now: number): number {
    if (now >= this.#checkedAt && now - this.#checkedAt < this.recheckMs) return this.#generation;
    this.#checkedAt = now;
    this.#scan();
    return this.#generation;
  }

  /** The accepted chains for the VOMS server `host` of `vo`, or undefined when no LSC file names them. */
  lsc(vo: string, host: string): readonly LscChain[] | undefined {
    return this.#content.lsc.get(vo)?.get(host);
  }

  /** VOMS server certificates kept in the directory (older layout). */
  get certificates(): readonly ParsedCertificate[] {
    return this.#content.certs;
  }

  #scan(): void {
    const files = this.#listFiles();
    if (files === undefined) {
      if (this.#present !== false) {
        this.log?.info(
          { dir: this.dir },
          this.#present === undefined
            ? 'VOMS directory absent: VOMS attributes are not verified'
            : 'VOMS directory removed: VOMS attributes are no longer verified',
        );
        if (this.#present === true) this.#generation++;
      }
      this.#present = false;
      this.#content = EMPTY;
      this.#stamp = undefined;
      return;
    }
    this.#present = true;
    const stamp = files.map((f) => `${f.rel}:${f.st.ino}:${f.st.size}:${f.st.mtimeMs}:${f.st.ctimeMs}`).join('|');
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    this.#content = this.#load(files);
    this.#generation++;
    let lscs = 0;
    for (const m of this.#content.lsc.values()) lscs += m.size;
    this.log?.info(
      {
        dir: this.dir,
        vos: this.#content.lsc.size,
        lscFiles: lscs,
        certificates: this.#content.certs.length,
        generation: this.#generation,
      },
      'VOMS directory loaded',
    );
  }

  /** Every file that matters, with its stat; undefined when the directory cannot be read. */
  #listFiles(): Array<{ rel: string; vo: string | undefined; name: string; st: Stats }> | undefined {
    let top: string[];
    try {
      top = readdirSync(this.dir).sort();
    } catch {
      return undefined;
    }
    const out: Array<{ rel: string; vo: string | undefined; name: string; st: Stats }> = [];
    const add = (vo: string | undefined, name: string): void => {
      const rel = vo === undefined ? name : `${vo}/${name}`;
      try {
        const st = statSync(join(this.dir, rel));
        if (st.isFile()) out.push({ rel, vo, name, st });
      } catch {
        // removed between readdir and stat
      }
    };
    for (const name of top) {
      if (name.startsWith('.')) continue;
      let st: Stats;
      try {
        st = statSync(join(this.dir, name));
      } catch {
        continue;
      }
      if (st.isDirectory()) {
        let inner: string[];
        try {
          inner = readdirSync(join(this.dir, name)).sort();
        } catch {
          continue;
        }
        for (const f of inner) if (LSC_FILE.test(f) || CERT_FILE.test(f)) add(name, f);
      } else if (CERT_FILE.test(name)) {
        add(undefined, name);
      }
    }
    return out;
  }

  #load(files: ReadonlyArray<{ rel: string; vo: string | undefined; name: string }>): Content {
    const lsc = new Map<string, Map<string, readonly LscChain[]>>();
    const certs: ParsedCertificate[] = [];
    for (const f of files) {
      let text: string;
      try {
        text = readFileSync(join(this.dir, f.rel), 'utf8');
      } catch (e) {
        this.log?.warn({ file: f.rel, code: (e as NodeJS.ErrnoException).code }, 'VOMS directory file unreadable');
        continue;
      }
      if (LSC_FILE.test(f.name) && f.vo !== undefined) {
        const chains = parseLsc(text);
        if (chains.length === 0) {
          this.log?.warn({ file: f.rel }, 'LSC file names no chain (a subject line and an issuer line are needed)');
          continue;
        }
        let m = lsc.get(f.vo);
        if (m === undefined) lsc.set(f.vo, (m = new Map<string, readonly LscChain[]>()));
        m.set(f.name.slice(0, -'.lsc'.length), chains);
        continue;
      }
      try {
        for (const der of pemBlocks(text)) certs.push(parseCertificate(der));
      } catch (e) {
        this.log?.warn(
          { file: f.rel, reason: e instanceof Error ? e.message : 'parse error' },
          'VOMS directory certificate not usable',
        );
      }
    }
    return { lsc, certs };
  }
}
