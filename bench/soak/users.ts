/**
 * The identities of a soak: the credential the run was given, and a second user of
 * the same development PKI when there is one (its CA key next to the CA certificate),
 * made as `ceres pki user NAME` makes it. Two users make the service keep owners apart
 * under load: listings, per-user indexes, session confinement.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { addDevUser, DEV_PKI_FILES } from '../../src/pki/dev-pki.js';
import { ArcClient, readCredentials } from '../harness/client.js';
import type { MixUser } from './mix.js';

export interface UserFiles {
  readonly name: string;
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
}

/** The credential files of a second user of the dev PKI that signed `caFile`, or undefined when it is not one. */
export async function secondDevUser(
  caFile: string,
  name = `soak-${randomBytes(3).toString('hex')}`,
): Promise<UserFiles | undefined> {
  const dir = dirname(caFile);
  if (!existsSync(join(dir, DEV_PKI_FILES.caKey))) return undefined;
  const u = await addDevUser(dir, name);
  return { name, cert: u.proxyFile, key: u.proxyFile, ca: caFile };
}

/** Users with `connections` kept-alive connections each, to the service at `url`. */
export async function mixUsers(
  url: string,
  files: readonly UserFiles[],
  connections: number,
  version: string,
  timeoutS = 120,
): Promise<MixUser[]> {
  const out: MixUser[] = [];
  for (const f of files) {
    const creds = await readCredentials(f.cert, f.key, f.ca);
    const client = new ArcClient(url, creds, { connections, timeoutS });
    client.version = version;
    out.push({ name: f.name, client, creds });
  }
  return out;
}

/** The dev PKI's own user and a second one, for a service whose PKI folder is `pkiDir`. */
export async function devPkiUsers(pkiDir: string): Promise<UserFiles[]> {
  const ca = join(pkiDir, DEV_PKI_FILES.caCert);
  const first = join(pkiDir, DEV_PKI_FILES.userProxy);
  const second = await secondDevUser(ca);
  return [{ name: 'user', cert: first, key: first, ca }, ...(second ? [second] : [])];
}
