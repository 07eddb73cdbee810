/**
 * The S3 endpoints of the configuration (`staging.gfal2.s3Endpoints`) and their keys.
 * S3 takes the site's keys, not the user's credentials, so who may use them is the
 * site's decision: a URL must name a configured endpoint (host, and port exactly as
 * configured), and an endpoint with `allowGroups` serves only jobs of those
 * authorization groups. Both are checked at submission (the item is refused, naming the
 * file and the endpoint) and again when the transfer starts (the endpoint's keys exist;
 * a dynamic output list, which the job writes after submission, cannot name a
 * restricted endpoint: the groups are the submitter's, known at submission only).
 *
 * The keys are read from their files at each helper start (a rotated key needs no
 * restart) and go only into the environment of a helper that runs as the service's
 * account: a helper running as the job's account could be read by the job itself (its
 * environment and memory belong to that account). They never reach a command line, a log
 * line, a metric or an error text: errors name the endpoint and the key's file at most.
 */
import { readFile, stat } from 'node:fs/promises';
import type { StagingConfig } from '../../config/sections/staging.js';
import { stagingError } from '../staging-error.js';
import { parseTransferUrl } from '../transfer-url.js';

export type S3EndpointConfig = StagingConfig['gfal2']['s3Endpoints'][number];

/** What the helper is given for one endpoint: gfal2's S3 options for the group `S3:<HOST>`. */
export interface S3Keys {
  readonly host: string;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  readonly pathStyle: boolean;
}

export const S3_SCHEMES: readonly string[] = ['s3', 's3s'];

/** `host` or `host:port` of a URL, as the configuration names endpoints (lower-case host). */
export function endpointOf(url: URL): string {
  return `${url.hostname.toLowerCase()}${url.port === '' ? '' : `:${url.port}`}`;
}

export function isS3(url: URL): boolean {
  return S3_SCHEMES.includes(url.protocol.replace(/:$/, '').toLowerCase());
}

export class S3Endpoints {
  readonly #byEndpoint: ReadonlyMap<string, S3EndpointConfig>;

  constructor(endpoints: readonly S3EndpointConfig[]) {
    this.#byEndpoint = new Map(endpoints.map((e) => [e.host.toLowerCase(), e]));
  }

  /** The configured endpoint `url` names, or undefined. */
  find(url: URL): S3EndpointConfig | undefined {
    return this.#byEndpoint.get(endpointOf(url));
  }

  /**
   * Why a job of `callerGroups` may not send `url` (an s3:// or s3s:// URL), or undefined
   * when it may; `callerGroups` undefined: unknown (a dynamic output list), so only an
   * endpoint open to every user serves.
   */
  refusal(url: URL, callerGroups: readonly string[] | undefined): string | undefined {
    const e = this.find(url);
    if (e === undefined) return `no S3 keys are configured for the endpoint ${endpointOf(url)}`;
    if (e.allowGroups === undefined) return undefined;
    if (callerGroups === undefined)
      return `the S3 endpoint ${endpointOf(url)} is restricted to authorization groups and cannot be named in a dynamic output list`;
    return e.allowGroups.some((g) => callerGroups.includes(g))
      ? undefined
      : `the S3 endpoint ${endpointOf(url)} is not open to the caller's authorization groups`;
  }

  /** The keys of `url`'s endpoint, read now; a staging error (no keys) when unusable. */
  async keysFor(url: URL): Promise<S3Keys> {
    const e = this.find(url);
    if (e === undefined)
      throw stagingError('CE_ERR_STAGING_NO_CREDENTIAL', `no S3 keys are configured for ${endpointOf(url)}`);
    const [accessKey, secretKey] = await Promise.all([keyLine(e.accessKeyFile), keyLine(e.secretKeyFile)]).catch(() => {
      throw stagingError(
        'CE_ERR_STAGING_NO_CREDENTIAL',
        `the S3 keys of ${endpointOf(url)} cannot be read (see \`ceres admin config check\`)`,
      );
    });
    return { host: url.hostname.toUpperCase(), accessKey, secretKey, region: e.region, pathStyle: e.pathStyle };
  }
}

async function keyLine(path: string): Promise<string> {
  const line = (await readFile(path, 'utf8')).split('\n')[0]?.trim() ?? '';
  if (line === '') throw new Error('empty');
  return line;
}

/**
 * Why the key files of the configured endpoints cannot serve (for `ceres admin config
 * check` and the start): missing, not a file, empty, or readable by others than its
 * owner (0600 at most: a key others can read is a key anyone on the host holds).
 */
export async function s3KeyFileProblems(
  endpoints: readonly S3EndpointConfig[],
): Promise<{ key: string; message: string }[]> {
  const out: { key: string; message: string }[] = [];
  for (const [i, e] of endpoints.entries()) {
    for (const which of ['accessKeyFile', 'secretKeyFile'] as const) {
      const path = e[which];
      const key = `staging.gfal2.s3Endpoints.${i}.${which}`;
      try {
        const st = await stat(path);
        if (!st.isFile()) out.push({ key, message: `${path}: not a file` });
        else if ((st.mode & 0o077) !== 0)
          out.push({
            key,
            message: `${path}: mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}, readable by others than its owner (0600 at most)`,
          });
        else await keyLine(path);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        out.push({
          key,
          message: `${path}: ${code === 'ENOENT' ? 'does not exist' : code === 'EACCES' ? 'not readable' : 'empty'}`,
        });
      }
    }
  }
  return out;
}

/**
 * The submission's check of a source or target URL (src/jobdesc/check-acceptance.ts):
 * why a caller of `callerGroups` may not name it, or undefined. Only s3:// and s3s://
 * URLs are judged; a URL that does not parse is left to the other checks.
 */
export function s3UrlRefusal(
  endpoints: readonly S3EndpointConfig[],
): (url: string, callerGroups: readonly string[] | undefined) => string | undefined {
  const s3 = new S3Endpoints(endpoints);
  return (raw, callerGroups) => {
    let url: URL;
    try {
      url = parseTransferUrl(raw).url;
    } catch {
      return undefined;
    }
    return isS3(url) ? s3.refusal(url, callerGroups ?? []) : undefined;
  };
}
