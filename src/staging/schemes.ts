/**
 * Which transfer path serves a URL scheme. http, https and WebDAV (dav, davs) go the
 * native way (src/staging/http: faster, and it needs nothing installed); the grid's other
 * protocols go through gfal2 when the gfal2 plugin that speaks them is installed
 * (src/staging/gfal2). A scheme with neither is refused at submission, naming it, rather
 * than accepted and failed minutes later in PREPARING.
 *
 * The plugins are probed once at start (gfal2's own list, see gfal2/probe.ts): installing
 * one takes a restart, as for any library the service loads.
 */

export type TransferPath = 'native' | 'gfal2';

/** Schemes the native path speaks (`file` is native too, where the configuration allows it). */
export const NATIVE_SCHEMES: readonly string[] = ['http', 'https', 'dav', 'davs', 'file'];

/**
 * Schemes each gfal2 plugin adds, by the plugin's name as gfal2 reports it (without its
 * version). http, https, dav and davs are left to the native path even with gfal2's http
 * plugin: it adds S3 only.
 */
export const GFAL2_PLUGIN_SCHEMES: Readonly<Record<string, readonly string[]>> = {
  xrootd: ['root', 'xroot', 'roots', 'xroots'],
  gridftp: ['gsiftp', 'ftp'],
  srm: ['srm'],
  http: ['s3', 's3s'],
  sftp: ['sftp'],
};

export class SchemeRegistry {
  readonly #gfal2: ReadonlySet<string>;

  /** `gfal2Plugins`: the installed plugins' names (`xrootd-2.21.3` or `xrootd`). */
  constructor(gfal2Plugins: readonly string[]) {
    const schemes = new Set<string>();
    for (const p of gfal2Plugins) {
      const name = p.replace(/-[0-9][0-9.]*$/, '').toLowerCase();
      for (const s of GFAL2_PLUGIN_SCHEMES[name] ?? []) schemes.add(s);
    }
    this.#gfal2 = schemes;
  }

  /** The path for `scheme` (any case), or undefined when nothing here speaks it. */
  pathFor(scheme: string): TransferPath | undefined {
    const s = scheme.toLowerCase();
    if (NATIVE_SCHEMES.includes(s)) return 'native';
    return this.#gfal2.has(s) ? 'gfal2' : undefined;
  }

  /** Every scheme accepted, for error texts and the docs: native first. */
  supported(): string[] {
    return [...NATIVE_SCHEMES.filter((s) => s !== 'file'), ...[...this.#gfal2].sort()];
  }
}

/** Without a probe (tests, a service that never asked): the native schemes only. */
export const NATIVE_ONLY = new SchemeRegistry([]);
